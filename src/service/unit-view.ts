// Pure view of what is in force for a unit: every file in systemd's order, which are spectune's, the later drop-ins
// that override spectune's keys, and the ExecStart diff against the operator's own unit. Text in, data out.
import { flagLines } from './plan.js';
import { unifiedDiff } from './diff.js';
import { DROPIN_NAME, effectiveEnvironment, effectiveListValue, parseUnitFile, type UnitFile } from './unit.js';

/** A candidate on trial lives in a runtime drop-in (its first comment line names its version). */
export const TRIAL_DROPIN_NAME = '90-spectune.trial.conf';
/** The keys spectune's drop-in sets: a later drop-in setting one of them overrides spectune. */
export const SPECTUNE_KEYS = ['ExecStart', 'Environment', 'TimeoutStopSec'] as const;

/** One file in force, in the order systemd applies it. */
export interface FileInForce {
  path: string;
  kind: 'unit' | 'spectune' | 'spectune-trial' | 'foreign';
}

/** A later, foreign drop-in that sets a key spectune's drop-in sets, with the value in force. */
export interface Override {
  path: string;
  key: string;
  effective: string;
}

/** What is in force for a unit and whose it is. */
export interface UnitView {
  files: FileInForce[];
  /** spectune's drop-in in force (the trial one when both are), null when none. */
  spectunePath: string | null;
  /** A candidate on trial is in force (provisional). */
  trial: boolean;
  overrides: Override[];
  /** The operator's own ExecStart (spectune's drop-ins left out) and the one in force. */
  operatorExecStart: string | null;
  inForceExecStart: string | null;
  /** Flag-per-line diff operator -> in force; empty when equal. */
  execDiff: string;
}

// Which file this is: the unit file (first), spectune's known-good or trial drop-in, or someone else's.
function classify(f: UnitFile, i: number): FileInForce['kind'] {
  if (i === 0) return 'unit';
  if (f.path.endsWith(`/${TRIAL_DROPIN_NAME}`)) return 'spectune-trial';
  if (f.path.endsWith(`/${DROPIN_NAME}`)) return 'spectune';
  return 'foreign';
}

// The value in force of one key, for an override warning.
function effectiveValue(files: UnitFile[], key: string, setBy: UnitFile): string {
  if (key === 'ExecStart') return effectiveListValue(files, 'Service', 'ExecStart')?.value ?? '(none)';
  if (key === 'Environment') {
    const env = effectiveEnvironment(files);
    const names = Object.keys(effectiveEnvironment([setBy]));
    return names.map((n) => `${n}=${env[n] ?? ''}`).join(' ') || '(cleared)';
  }
  return (
    files
      .flatMap(parseUnitFile)
      .filter((e) => e.section === 'Service' && e.key === key)
      .pop()?.value ?? '(none)'
  );
}

// Build the view of a unit from its `systemctl cat` files (already in systemd's order).
export function viewUnit(files: UnitFile[]): UnitView {
  const kinds = files.map((f, i) => ({ path: f.path, kind: classify(f, i) }));
  const ours = kinds.map((k, i) => (k.kind.startsWith('spectune') ? i : -1)).filter((i) => i >= 0);
  const lastOurs = ours.length ? ours[ours.length - 1] : -1;
  const overrides: Override[] = [];
  if (lastOurs >= 0) {
    for (let i = lastOurs + 1; i < files.length; i++) {
      if (kinds[i].kind !== 'foreign') continue;
      const keys = new Set(
        parseUnitFile(files[i])
          .filter((e) => e.section === 'Service')
          .map((e) => e.key),
      );
      for (const key of SPECTUNE_KEYS)
        if (keys.has(key))
          overrides.push({ path: files[i].path, key, effective: effectiveValue(files, key, files[i]) });
    }
  }
  const operator =
    effectiveListValue(
      files.filter((_, i) => !ours.includes(i)),
      'Service',
      'ExecStart',
    )?.value ?? null;
  const inForce = effectiveListValue(files, 'Service', 'ExecStart')?.value ?? null;
  const execDiff =
    lastOurs >= 0
      ? unifiedDiff(flagLines(operator ?? ''), flagLines(inForce ?? ''), {
          from: "ExecStart (operator's unit)",
          to: 'ExecStart (in force)',
        })
      : '';
  return {
    files: kinds,
    spectunePath: lastOurs >= 0 ? files[lastOurs].path : null,
    trial: ours.some((i) => kinds[i].kind === 'spectune-trial'),
    overrides,
    operatorExecStart: operator,
    inForceExecStart: inForce,
    execDiff,
  };
}

// Drop-ins that are not spectune's, sort after spectune's drop-in name (systemd applies them later) and set a key
// spectune's drop-in sets: what would override a deploy, whether or not spectune's drop-in exists yet.
export function laterForeignDropIns(files: UnitFile[], ourName = DROPIN_NAME): { path: string; keys: string[] }[] {
  return files
    .slice(1)
    .filter((f, i) => classify(f, i + 1) === 'foreign' && (f.path.split('/').pop() ?? '') > ourName)
    .map((f) => {
      const set = new Set(
        parseUnitFile(f)
          .filter((e) => e.section === 'Service')
          .map((e) => e.key),
      );
      return { path: f.path, keys: SPECTUNE_KEYS.filter((k) => set.has(k)) };
    })
    .filter((x) => x.keys.length > 0);
}

// The changed flags of an ExecStart diff ("-x 1, +x 2"), for a one-line summary.
export function summarizeExecDiff(diff: string): string {
  const changed = diff
    .split('\n')
    .slice(2)
    .filter((l) => l.startsWith('-') || l.startsWith('+'));
  return changed.length ? changed.join(', ') : 'no change to ExecStart';
}

// The view as text lines for status, doctor and plans.
export function formatUnitView(v: UnitView): string[] {
  const tag = (k: FileInForce['kind']) =>
    k === 'unit'
      ? 'unit file'
      : k === 'spectune'
        ? "spectune's drop-in"
        : k === 'spectune-trial'
          ? "spectune's trial drop-in: candidate in force (provisional)"
          : "drop-in (not spectune's)";
  const lines = [
    '  files in force (systemd order):',
    ...v.files.map((f, i) => `    ${i + 1}. ${f.path}  [${tag(f.kind)}]`),
  ];
  for (const o of v.overrides)
    lines.push(`  warning: ${o.path} (after spectune's drop-in) overrides ${o.key}; in force: ${o.key}=${o.effective}`);
  if (v.spectunePath) {
    lines.push(
      `  the unit file's own ExecStart is overridden by ${v.spectunePath}${v.execDiff ? "; diff against the operator's unit:" : ' (same command line)'}`,
    );
    if (v.execDiff)
      lines.push(
        ...v.execDiff
          .trimEnd()
          .split('\n')
          .map((l) => `    ${l}`),
      );
  }
  return lines;
}

/** A doctor judgement on what is in force. */
export interface InForceJudgement {
  status: 'PASS' | 'WARN';
  summary: string;
  fix: string | null;
}

// Judge what is in force: a later foreign drop-in overriding spectune's keys, or spectune's drop-in overriding the unit.
export function judgeInForce(v: UnitView, unit: string): InForceJudgement {
  if (v.overrides.length) {
    const paths = [...new Set(v.overrides.map((o) => o.path))];
    return {
      status: 'WARN',
      summary: `${paths.join(', ')} comes after spectune's drop-in and overrides ${v.overrides.map((o) => `${o.key} (in force: ${o.key}=${o.effective})`).join('; ')}: what spectune deploys is not what runs`,
      fix: `move ${paths.join(' and ')} out of ${unit}.d (or rename it below 90-) and systemctl daemon-reload, or put those keys in the unit file`,
    };
  }
  if (v.spectunePath) {
    return {
      status: 'WARN',
      summary: `spectune's drop-in ${v.spectunePath} is in force${v.trial ? ' (a candidate on trial, provisional)' : ''}: the unit file's own ExecStart is overridden (${summarizeExecDiff(v.execDiff)}); an edit of the unit file is ignored while it stays`,
      fix: `keep it, or \`spectune rollback --to none\` to run the unit as written; \`spectune status\` shows the diff`,
    };
  }
  return {
    status: 'PASS',
    summary: `no spectune drop-in: the unit runs as written (${v.files.length} file${v.files.length === 1 ? '' : 's'} in force)`,
    fix: null,
  };
}
