// Pure planning of a deploy: from the unit as systemd sees it and the wanted engine changes to the exact drop-in,
// the diff and the command list. `applyDeploy` (deploy.ts) performs a plan; `--dry-run` only prints it.
import { ToolError } from '../errors.js';
import { patchExecStart, readExecStart } from '../engines/command-line.js';
import type { EngineName, EngineSettings, ParamValue } from '../engines/types.js';
import { redactText } from '../redact.js';
import { unifiedDiff } from './diff.js';
import { leasePaths, leaseSteps, TRIAL_DROPIN_NAME, type LeaseOptions } from './lease.js';
import {
  DROPIN_NAME,
  assertSingleLine,
  dropInPath,
  effectiveEnvironment,
  effectiveListValue,
  parseDropIn,
  parseUnitFile,
  renderDropIn,
  statePaths,
  type UnitFile,
} from './unit.js';

/** One step of a plan, printed by --dry-run and performed in this order by applyDeploy. */
export type PlanStep = { kind: 'write'; path: string; why: string } | { kind: 'exec'; argv: string[]; why: string };

/** Engine changes: a value sets or adds a flag, null removes it. */
export type Changes = Record<string, ParamValue | null>;

/** Everything a deploy will do, computed without touching the host. */
export interface DeployPlan {
  unit: string;
  engine: EngineName;
  changes: Changes;
  dropInPath: string;
  /** spectune's drop-in in force now: the runtime candidate when one runs, else the /etc one (null when absent). */
  previousDropIn: string | null;
  /** The runtime candidate drop-in now (null when absent). */
  previousTrial: string | null;
  /** The operator's unit file (its mode is kept by the drop-ins). */
  unitPath: string;
  /** Set when the candidate is provisional (commit-confirmed). */
  lease: LeaseOptions | null;
  /** The full new drop-in. */
  dropInText: string;
  currentExecStart: string;
  newExecStart: string;
  /** Engine settings before and after (as read back from ExecStart). */
  before: EngineSettings;
  config: EngineSettings;
  /** Unified diffs: the drop-in file, then ExecStart one flag per line. */
  diff: string;
  steps: PlanStep[];
  warnings: string[];
  /** The operator's restart hooks, one line each (run on this machine around the restart; never in a dry run). */
  hooks?: string[];
  /** True when the new drop-in equals the current one. */
  noop: boolean;
  /** Every file in force now, in systemd's order (the controller fills it in from the unit it read). */
  filesInForce?: { path: string; kind: string }[];
}

/** Which unit the plan is for and what else the drop-in sets. */
export interface PlanOptions {
  unit: string;
  unitPath?: string;
  /** Environment= variables to set in the drop-in (null removes one spectune set before). */
  environment?: Record<string, string | null>;
  /** TimeoutStopSec= for the drop-in (the fix offered when the drain outlasts the stop timeout). */
  timeoutStopSec?: number | null;
  /** Deploy provisionally under a commit-confirmed lease (real systemd hosts). */
  lease?: LeaseOptions;
}

// Plan a deploy of `changes` on top of the ExecStart in force (the operator's unit plus every drop-in).
export function planDeploy(
  unitText: string,
  dropIns: UnitFile[],
  engine: EngineName,
  changes: Changes,
  opts: PlanOptions,
): DeployPlan {
  const trial = dropIns.find((d) => d.path.endsWith(`/${TRIAL_DROPIN_NAME}`)) ?? null;
  const ours = trial ?? dropIns.find((d) => d.path.endsWith(`/${DROPIN_NAME}`)) ?? null;
  const unitPath = opts.unitPath ?? `/etc/systemd/system/${opts.unit}`;
  const files = [{ path: unitPath, text: unitText }, ...dropIns];
  const exec = effectiveListValue(files, 'Service', 'ExecStart');
  const path = opts.lease ? leasePaths(opts.unit).trial : dropInPath(opts.unit);
  assertNotShadowed(files, path);
  if (!exec)
    throw new ToolError('E_INPUT_UNUSABLE', `${opts.unit} has no ExecStart=`, {
      hint: 'spectune patches the engine flags of an existing ExecStart',
    });
  for (const [k, v] of Object.entries(changes)) if (typeof v === 'string') assertSingleLine(`the value of ${k}`, v);
  const env = effectiveEnvironment(files);
  const patch = patchExecStart(exec.value, engine, changes);
  const patched = patch.execStart;
  assertSingleLine('the new ExecStart', patched);
  const previous = ours ? parseDropIn(ours) : null;
  const dropInText = renderDropIn({
    execStart: patched,
    environment: mergeEnvironment(previous?.environment ?? {}, opts.environment ?? {}),
    timeoutStopSec: opts.timeoutStopSec === undefined ? (previous?.timeoutStopSec ?? null) : opts.timeoutStopSec,
  });
  return {
    unit: opts.unit,
    engine,
    changes,
    dropInPath: path,
    previousDropIn: ours?.text ?? null,
    previousTrial: trial?.text ?? null,
    unitPath,
    lease: opts.lease ?? null,
    dropInText,
    currentExecStart: exec.value,
    newExecStart: patched,
    before: readSettings(exec.value, env, engine),
    config: readSettings(patched, env, engine),
    diff: renderPlanDiff(path, ours?.text ?? '', dropInText, exec.value, patched),
    steps: planSteps(opts.unit, path, opts.lease),
    warnings: [
      ...patch.warnings,
      ...newEngineWarnings(exec.value, patched, env, engine),
      ...(patched === exec.value ? ['the engine flags in force already have these values'] : []),
    ],
    noop: ours?.text === dropInText,
  };
}

// Engine settings an ExecStart value means (variables resolved from the unit's Environment=).
export function readSettings(execStart: string, env: Record<string, string>, engine: EngineName): EngineSettings {
  return readExecStart(execStart, env, { engine }).settings;
}

// Apply environment changes: a string sets, null removes.
function mergeEnvironment(
  base: Record<string, string>,
  changes: Record<string, string | null>,
): Record<string, string> {
  const out = { ...base };
  for (const [k, v] of Object.entries(changes)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}

// The ordered steps applyDeploy performs (a leased deploy arms the host-side timer before the candidate goes in).
function planSteps(unit: string, path: string, lease?: LeaseOptions): PlanStep[] {
  const st = statePaths(unit);
  const leased: PlanStep[] = lease
    ? leaseSteps(unit, lease).map((why, i) =>
        i === 0
          ? { kind: 'write', path: leasePaths(unit).lease, why }
          : {
              kind: 'exec',
              argv: ['systemd-run', `--unit=${leasePaths(unit).timerUnit}`, '/bin/sh', leasePaths(unit).script],
              why: why.replace(/^.*# /, ''),
            },
      )
    : [];
  return [
    { kind: 'write', path: `${st.versionsDir}/<n>.conf`, why: 'keep this version (history for rollback)' },
    ...leased,
    {
      kind: 'write',
      path,
      why: lease
        ? 'install the candidate drop-in in /run (provisional: a reboot forgets it)'
        : 'install the candidate drop-in atomically (temp file + rename)',
    },
    { kind: 'exec', argv: ['systemctl', 'daemon-reload'], why: 'make systemd read the drop-in' },
    { kind: 'write', path: st.current, why: 'remember which version is deployed' },
    { kind: 'exec', argv: ['systemctl', 'restart', unit], why: 'start the candidate (after the drain check)' },
    ...(lease
      ? [
          {
            kind: 'write' as const,
            path: dropInPath(unit),
            why: 'once it is ready (and measured): confirm it, from /run to /etc as known-good; stop the lease timer',
          },
        ]
      : []),
  ];
}

// Refuse when a drop-in sorted after ours also sets ExecStart (it would silently shadow the candidate).
function assertNotShadowed(files: UnitFile[], ours: string): void {
  const after = files
    .slice(1)
    .filter(
      (f) => f.path !== ours && !f.path.endsWith(`/${TRIAL_DROPIN_NAME}`) && f.path.split('/').pop()! > DROPIN_NAME,
    );
  const shadowing = after.filter((f) => parseUnitFile(f).some((e) => e.key === 'ExecStart'));
  if (shadowing.length) {
    throw new ToolError(
      'E_INPUT_UNUSABLE',
      `${shadowing.map((f) => f.path).join(', ')} sets ExecStart= after spectune's drop-in and would override it`,
      {
        hint: `rename it to sort before ${DROPIN_NAME}, or move its ExecStart into the unit file`,
      },
    );
  }
}

// Both diffs of a plan, secrets redacted.
function renderPlanDiff(path: string, before: string, after: string, execBefore: string, execAfter: string): string {
  const file = unifiedDiff(before, after, { from: before ? `a${path}` : '/dev/null', to: `b${path}` });
  const exec = unifiedDiff(flagLines(execBefore), flagLines(execAfter), {
    from: 'ExecStart (in force)',
    to: 'ExecStart (candidate)',
  });
  return redactText([file, exec].filter(Boolean).join('\n'));
}

// One flag (and its value) per line, so that an ExecStart diff shows exactly which flags change.
export function flagLines(execStart: string): string {
  const words = execStart.match(/"(?:[^"\\]|\\.)*"|'[^']*'|\S+/g) ?? [];
  const lines: string[] = [];
  for (const w of words) {
    if (w.startsWith('-') || lines.length === 0) lines.push(w);
    else lines[lines.length - 1] += ` ${w}`;
  }
  return lines.length ? `${lines.join('\n')}\n` : '';
}

// What the engine would say of the new command line and not of the old (e.g. SGLang overriding draft tokens at topk 1).
function newEngineWarnings(before: string, after: string, env: Record<string, string>, engine: EngineName): string[] {
  const old = new Set(readExecStart(before, env, { engine }).problems.map((p) => p.message));
  return readExecStart(after, env, { engine })
    .problems.filter((p) => !old.has(p.message))
    .map((p) => `${p.flag}: ${p.message}`);
}

// A file's owner in a plan's list of files in force.
function describeFileKind(kind: string): string {
  return kind === 'unit'
    ? 'unit file'
    : kind === 'foreign'
      ? "not spectune's"
      : kind === 'spectune-trial'
        ? "spectune's trial drop-in"
        : "spectune's";
}

// The plan as text for --dry-run: warnings, files in force, the diffs and the steps.
export function renderPlan(plan: DeployPlan): string {
  const lines = [`plan for ${plan.unit}${plan.noop ? ' (no change: the drop-in already says this)' : ''}:`];
  if (plan.lease)
    lines.push(
      `provisional for ${Math.round(plan.lease.ms / 1000)} s: the host restores known-good unless spectune confirms the candidate (commit-confirmed lease)`,
    );
  for (const w of plan.warnings) lines.push(`warning: ${w}`);
  if (plan.filesInForce)
    lines.push(
      'files in force now (systemd order):',
      ...plan.filesInForce.map((f, i) => `  ${i + 1}. ${f.path}  [${describeFileKind(f.kind)}]`),
    );
  lines.push('', plan.diff || '(no difference)', 'steps:');
  plan.steps.forEach((s, i) => {
    lines.push(`  ${i + 1}. ${s.kind === 'write' ? `write ${s.path}` : s.argv.join(' ')}  # ${s.why}`);
  });
  if (plan.hooks?.length) lines.push('hooks (target.hooks):', ...plan.hooks.map((h) => `  ${h}`));
  return redactText(`${lines.join('\n')}\n`);
}
