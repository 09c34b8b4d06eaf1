// `spectune rollback`: back to the last known-good drop-in (or none), restart, verify readiness. --dry-run prints
// the plan; a unit spectune never deployed to is left alone (no restart) and said so.
import { rollbackService, type RollbackOutcome } from '../../app/rollback.js';
import { TARGET_FLAGS, TARGET_USAGE } from '../../app/service-target.js';
import { DEFAULT_READY_TIMEOUT_MS, RollbackFailedError, type RollbackPlan } from '../../service/index.js';
import { unifiedDiff } from '../../service/diff.js';
import type { Version } from '../../service/deploy.js';
import { ToolError } from '../../errors.js';
import { formatServiceEvent, formatSettings } from '../../service/render.js';
import { redactText, redactValue } from '../../redact.js';
import { parseFlags, parseReadyTimeout } from '../args.js';
import { EXIT, reportError } from '../exit.js';
import type { Command } from '../io.js';
import { resolveCommandTarget } from '../target.js';

const USAGE = `usage: spectune rollback [--to N|none] [--dry-run] [--json] [--ready-timeout S] [--break-lock]
  --to N|none        return to kept drop-in version N, or none: the operator's own unit without spectune's drop-in
                     (default: the last known-good version; \`spectune history\` lists them)
  --dry-run          print the version it would return to, the drop-in change and the commands; change nothing
  --ready-timeout S  start-up deadline of the known-good config in seconds (default ${DEFAULT_READY_TIMEOUT_MS / 1000})
  --break-lock       break a STALE lock on the unit (its owner is gone); what it breaks is printed
  Nothing to do (spectune never deployed to the unit, or it is active on that version already): nothing is
  changed or restarted; exit 0.
  A multi-host target: every rank is stopped, returned to its own known-good version and restarted (rank0 serves
  again and every other rank runs); --rank N rolls back one rank.
${TARGET_USAGE}
examples:
  spectune rollback --host root@gpu1 --unit sglang-qwen --dry-run
  spectune rollback --host root@gpu1 --unit sglang-qwen --engine sglang
  spectune rollback --host root@gpu1 --unit sglang-qwen --to none`;
const FLAGS = {
  ...TARGET_FLAGS,
  to: { type: 'string' },
  'dry-run': { type: 'boolean' },
  json: { type: 'boolean' },
  'ready-timeout': { type: 'string' },
  'break-lock': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

// --to N|none as a version.
function parseTo(raw: string | undefined): Version | undefined {
  if (raw === undefined) return undefined;
  if (raw === 'none') return 'none';
  if (/^[1-9]\d*$/.test(raw)) return Number(raw);
  throw new ToolError('E_USAGE', `--to: expected a kept version number or none, got "${raw}"`, {
    hint: "e.g. --to none (the operator's own unit) or --to 2",
  });
}

// The dry run's text: version, drop-in diff, steps.
function renderRollbackPlan(p: RollbackPlan): string {
  const lines = [
    `rollback plan for ${p.unit}: return to version ${p.version}${p.version === 'none' ? " (the operator's unit, no spectune drop-in)" : ''}`,
  ];
  const diff = unifiedDiff(p.dropInNow ?? '', p.dropInAfter ?? '', {
    from: p.dropInNow === null ? '/dev/null' : `a${p.dropInPath}`,
    to: p.dropInAfter === null ? '/dev/null' : `b${p.dropInPath}`,
  });
  lines.push(
    'files in force now (systemd order):',
    ...p.filesInForce.map(
      (f, i) =>
        `  ${i + 1}. ${f.path}${f.kind === 'foreign' ? " (not spectune's)" : f.kind === 'unit' ? ' (unit file)' : " (spectune's)"}`,
    ),
  );
  lines.push(
    '',
    diff || '(drop-in unchanged)',
    'steps:',
    ...p.steps.map((s, i) => `  ${i + 1}. ${s}`),
    '(dry run: nothing was changed)',
  );
  return `${lines.join('\n')}\n`;
}

// The --json document of every outcome.
function toJson(r: RollbackOutcome): unknown {
  if (r.status === 'nothing')
    return { status: 'nothing', reason: r.reason, config: {}, verdict: null, timeToVerdictMs: null };
  if (r.status === 'dry-run')
    return r.plans.length > 1
      ? { status: 'dry-run', plan: r.plan, ranks: r.plans }
      : { status: 'dry-run', plan: r.plan };
  return { status: r.status, config: r.config, verdict: r.verdict, timeToVerdictMs: r.timeToVerdictMs };
}

// Entry point of `spectune rollback`.
export const run: Command = async (argv, io) => {
  const { values } = parseFlags(argv, FLAGS, USAGE);
  if (values.help) {
    io.stdout.write(`${USAGE}\n`);
    return EXIT.ok;
  }
  const readyTimeoutMs = parseReadyTimeout(values['ready-timeout']);
  parseTo(values.to);
  const target = await resolveCommandTarget(values, io);
  const progress = (e: Parameters<typeof formatServiceEvent>[0]) => {
    const l = formatServiceEvent(e);
    if (l) io.stderr.write(`${redactText(l)}\n`);
  };
  try {
    const r = await rollbackService(target, progress, {
      readyTimeoutMs,
      dryRun: values['dry-run'] === true,
      to: parseTo(values.to),
      breakLock: values['break-lock'] === true,
    });
    if (values.json) io.stdout.write(`${JSON.stringify(redactValue(toJson(r)))}\n`);
    else if (r.status === 'nothing') io.stdout.write(`${redactText(r.reason)}\n`);
    else if (r.status === 'dry-run')
      io.stdout.write(
        redactText(
          r.plans
            .map((p) => (r.plans.length > 1 ? `# rank${p.rank} ${p.host}\n` : '') + renderRollbackPlan(p.plan))
            .join('\n'),
        ),
      );
    else
      io.stdout.write(
        redactText(
          `rolled back ${target.unit} to version ${r.version}: ready; in force: ${formatSettings(r.config)}\n`,
        ),
      );
    return EXIT.ok;
  } catch (e) {
    if (values.json && e instanceof RollbackFailedError) {
      io.stdout.write(
        `${JSON.stringify(redactValue({ status: 'failed', config: {}, verdict: e.verdict, timeToVerdictMs: null }))}\n`,
      );
    }
    return reportError(e, io);
  }
};
