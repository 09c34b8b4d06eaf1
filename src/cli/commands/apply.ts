// `spectune apply --set KEY=VALUE ...`: deploy one config via the drop-in, restart safely, wait for readiness,
// roll back on failure. --dry-run prints the plan (files and commands, as a diff).
import { applyConfig, type ApplyOutcome } from '../../app/apply.js';
import { TARGET_FLAGS, TARGET_USAGE } from '../../app/service-target.js';
import { ToolError } from '../../errors.js';
import type { ParamValue } from '../../engines/types.js';
import { redactText, redactValue } from '../../redact.js';
import { DEFAULT_READY_TIMEOUT_MS, describeRollbackTarget, renderPlan, type Changes } from '../../service/index.js';
import { formatSettings, formatVerdict } from '../../service/render.js';
import { numberFlag, parseDrainTimeout, parseFlags, parseLease, parseReadyTimeout } from '../args.js';
import { createServiceProgress } from '../service-progress.js';
import { EXIT, reportError } from '../exit.js';
import type { Command } from '../io.js';
import { resolveCommandTarget } from '../target.js';

const USAGE = `usage: spectune apply --set KEY=VALUE ... [--unset KEY ...] [--dry-run] [--json] [--no-rollback] [--timeout-stop-sec N] [--ready-timeout S] [--break-lock] [--lease DURATION] [--drain-timeout DURATION]
  --set KEY=VALUE        an engine setting, as a key (--set speculative_num_steps=4) or as the engine flag
                         (--set --speculative-num-steps=4); repeat for several
  --unset KEY            remove a flag from ExecStart
  --dry-run              print the drop-in diff and the commands; change nothing (no file, no restart, no action log)
  --no-rollback          leave a failed candidate in place (default: roll back to the last known-good config);
                         the host's lease still restores known-good when it lapses (--lease 0 to keep it)
  --lease DURATION       the candidate runs provisionally from /run until it is ready; if spectune dies first the
                         host restores known-good within DURATION (default target.lease, else 5m; 0 = off)
  --drain-timeout D      before the stop, wait at most D for the engine's in-flight requests (a countdown shows
                         what is left), then stop anyway (default target.drainTimeout, else 10m; 0 = no wait)
  --timeout-stop-sec N   add TimeoutStopSec=N to the drop-in (default: the unit's own)
  --ready-timeout S      start-up deadline in seconds (default ${DEFAULT_READY_TIMEOUT_MS / 1000}); a start neither ready nor
                         failed by then is stopped and rolled back
  --json                 {"status", "config", "verdict", "timeToVerdictMs"} on stdout
  --break-lock           break a STALE lock on the unit (its owner is gone); what it breaks is printed; a live
                         lock (another tune/apply/rollback running) refuses the command, naming its owner
  A multi-host target: every rank gets its drop-in, ranks restart in rank order (rank0 first), ready when rank0 is
  ready and every other rank runs; a failure is diagnosed from every rank's journal and every rank is rolled back.
  --rank N applies to one rank (a worker counts as ready when it runs through a 10 s watch without failing).
${TARGET_USAGE}
examples:
  spectune apply --host root@gpu1 --unit sglang-qwen --set speculative_num_steps=4 --dry-run
  spectune apply --host root@gpu1 --unit sglang-qwen --set --speculative-num-steps=4 --json`;
const FLAGS = {
  ...TARGET_FLAGS,
  set: { type: 'string', multiple: true },
  unset: { type: 'string', multiple: true },
  'dry-run': { type: 'boolean' },
  json: { type: 'boolean' },
  'no-rollback': { type: 'boolean' },
  'timeout-stop-sec': { type: 'string' },
  'ready-timeout': { type: 'string' },
  'break-lock': { type: 'boolean' },
  lease: { type: 'string' },
  'drain-timeout': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

// Canonical setting key from "speculative_num_steps", "speculative-num-steps" or "--speculative-num-steps".
function settingKey(raw: string): string {
  const key = raw.replace(/^--/, '').replace(/-/g, '_').toLowerCase();
  if (!/^[a-z][a-z0-9_]*$/.test(key))
    throw new ToolError('E_USAGE', `--set: "${raw}" is not a setting name`, {
      hint: 'e.g. --set speculative_num_steps=4',
    });
  return key;
}

// A typed value: numbers and booleans as such, everything else a string (quoted into ExecStart by the engine adapter).
function settingValue(raw: string): ParamValue {
  if (/^-?\d+(\.\d+)?$/.test(raw)) return Number(raw);
  if (raw === 'true' || raw === 'false') return raw === 'true';
  return raw;
}

// Parse --set/--unset into engine changes.
export function parseChanges(sets: string[], unsets: string[]): Changes {
  const changes: Changes = {};
  for (const s of sets) {
    const eq = s.indexOf('=');
    if (eq <= 0)
      throw new ToolError('E_USAGE', `--set: expected KEY=VALUE, got "${s}"`, {
        hint: 'e.g. --set speculative_num_steps=4',
      });
    const key = settingKey(s.slice(0, eq));
    if (s.slice(eq + 1).trim() === '')
      throw new ToolError('E_USAGE', `--set ${s}: empty value for ${key}`, {
        hint: `give a value (--set ${key}=VALUE) or remove the flag with --unset ${key}`,
      });
    changes[key] = settingValue(s.slice(eq + 1));
  }
  for (const u of unsets) changes[settingKey(u)] = null;
  if (!Object.keys(changes).length)
    throw new ToolError('E_USAGE', 'nothing to apply: give --set KEY=VALUE or --unset KEY', {
      hint: 'e.g. --set speculative_num_steps=4',
    });
  return changes;
}

// Human summary of an apply.
function renderOutcome(o: ApplyOutcome, unit: string): string {
  if (o.json.status === 'ready') return `ready: ${unit} runs ${formatSettings(o.plan.config)}\n`;
  const lines = [`failed: ${unit} with ${JSON.stringify(o.plan.changes)}`];
  if (o.json.verdict) lines.push(formatVerdict(o.json.verdict, o.diagnosis).trimEnd());
  if (o.startError) lines.push(`${o.startError.code}: start-up deadline missed (hint: ${o.startError.hint})`);
  if (o.json.timeToVerdictMs !== null)
    lines.push(`verdict ${(o.json.timeToVerdictMs / 1000).toFixed(1)} s after the fatal log line`);
  if (o.rollback)
    lines.push(
      `rolled back to ${describeRollbackTarget(o.rollback.version)}: ready after ${(o.rollback.elapsedMs / 1000).toFixed(1)} s`,
    );
  return `${lines.join('\n')}\n`;
}

// Entry point of `spectune apply`.
export const run: Command = async (argv, io) => {
  const { values } = parseFlags(argv, FLAGS, USAGE, false, { dashValues: ['set', 'unset'] });
  if (values.help) {
    io.stdout.write(`${USAGE}\n`);
    return EXIT.ok;
  }
  const changes = parseChanges(values.set ?? [], values.unset ?? []);
  const timeoutStopSec =
    values['timeout-stop-sec'] === undefined
      ? undefined
      : numberFlag('timeout-stop-sec', values['timeout-stop-sec'], NaN);
  const readyTimeoutMs = parseReadyTimeout(values['ready-timeout']);
  const target = await resolveCommandTarget(values, io);
  const drainTimeoutMs = parseDrainTimeout(values['drain-timeout']);
  const progress = createServiceProgress(io);
  const r = await applyConfig({
    target,
    changes,
    dryRun: values['dry-run'] === true,
    rollback: values['no-rollback'] !== true,
    timeoutStopSec,
    readyTimeoutMs,
    breakLock: values['break-lock'] === true,
    leaseMs: parseLease(values.lease),
    drainTimeoutMs,
    onEvent: progress.onEvent,
  }).finally(() => progress.close());
  if ('dryRun' in r) {
    if (r.plans.length === 1)
      io.stdout.write(values.json ? `${JSON.stringify(redactValue({ plan: r.plan }))}\n` : renderPlan(r.plan));
    else
      io.stdout.write(
        values.json
          ? `${JSON.stringify(redactValue({ plan: r.plan, ranks: r.plans }))}\n`
          : r.plans.map((p) => `# rank${p.rank} ${p.host}\n${renderPlan(p.plan)}`).join('\n'),
      );
    return EXIT.ok;
  }
  const what =
    target.ranks.length > 1
      ? `${target.unit} on every rank (${target.ranks.map((k) => k.target ?? 'this machine').join(', ')})`
      : target.unit;
  io.stdout.write(values.json ? `${JSON.stringify(redactValue(r.json))}\n` : redactText(renderOutcome(r, what)));
  if (r.rollbackError) return reportError(r.rollbackError, io);
  return r.json.status === 'ready' ? EXIT.ok : EXIT.failure;
};
