// `spectune tune -c spectune.yaml [--resume] [--dry-run] [--restore] [--json]`: parse, wire, run the campaign, render.
import { setMaxListeners } from 'node:events';
import { dirname } from 'node:path';
import { runTuneCommand, toTuneJson, type TuneCommandResult } from '../../app/tune-command.js';
import { DEFAULT_BENCH_TIMEOUTS } from '../../config/index.js';
import { redactText, redactValue } from '../../redact.js';
import { chooseRenderMode, createRenderer, formatConfig } from '../render/index.js';
import { formatChatSummary } from '../render/chat.js';
import { parseDrainTimeout, parseFlags, parseLease } from '../args.js';
import { EXIT } from '../exit.js';
import { handleInterrupts, ignoreBrokenOutput, SIGNAL_EXIT } from '../interrupt.js';
import type { CliIo, Command } from '../io.js';

const USAGE = `usage: spectune tune -c spectune.yaml [--resume] [--dry-run] [--restore] [--json] [--confirm-probes] [--ssh-config FILE] [--break-lock] [--lease DURATION]
       [--drain-timeout DURATION] [--action-log FILE]
  -c FILE           the campaign config (default ./spectune.yaml; example: examples/spectune.yaml, schema:
                    schema/spectune.schema.json); benchmark.timeouts default to ${Object.entries(DEFAULT_BENCH_TIMEOUTS)
                      .map(([k, v]) => `${k} ${v}`)
                      .join(', ')}
  --resume          continue the last unfinished campaign (after Ctrl-C, a kill or a reboot)
  --dry-run         print the baseline, the first proposals and the first deploy's files and commands; change
                    nothing (no store file, no action log, no restart)
  --restore         end on the original config instead of the winner (default: the winner)
  --json            NDJSON progress events on stderr, the result as JSON on stdout
  --confirm-probes  deploy the first config the memory predictor refuses, once, to confirm the prediction
  --ssh-config FILE ssh_config for the hosts (default: your ~/.ssh/config)
  --break-lock      break a STALE lock on the unit (its owner's pid is gone, or no heartbeat for its lease);
                    what it breaks is printed. A live lock is never broken
  --lease DURATION  every candidate runs provisionally from /run: unless this run confirms it, the host's own timer
                    restores known-good within DURATION, even if spectune is killed or cut off (default
                    target.lease, else 5m; 0 = off)
  --action-log FILE one file for the actions of this run (default $SPECTUNE_ACTION_LOG, else the campaign's own,
                    next to the store: <store>.actions/campaign-<id>.jsonl). The store, the action log and the ssh
                    control directory are checked before any host is touched (a failure is one line with the fix)
  --drain-timeout D before each stop, wait at most D for the engine's in-flight requests, then stop anyway
                    (default target.drainTimeout, else 10m; 0 = no wait); target.hooks runs commands on this
                    machine before each stop and after each ready (e.g. the load balancer's drain)
  The campaign holds a lock on each host (/var/lib/spectune/<unit>/lock): a second tune/apply/rollback of the unit
  is refused, naming the owner. --resume breaks the lock of this machine's own killed tune (printed).
  Ctrl-C, SIGTERM and SIGHUP (a closed terminal) stop safely: the candidate is rolled back, the lock released,
  the campaign marked interrupted (exit 130, 143, 129); a second Ctrl-C says so, a third leaves the host to its
  lease. --resume goes on without losing or repeating a trial.
examples:
  spectune tune -c spectune.yaml --dry-run
  spectune tune -c spectune.yaml
  spectune tune -c spectune.yaml --resume`;

/** Every poll of a long wait listens on the Ctrl-C signal; a campaign of hours legitimately holds many at once. */
const MAX_ABORT_LISTENERS = 0;

/** The shell's convention for "ended by Ctrl-C" (128 + SIGINT). */
const EXIT_INTERRUPTED = 130;

const FLAGS = {
  config: { type: 'string', short: 'c' },
  resume: { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  restore: { type: 'boolean' },
  json: { type: 'boolean' },
  'confirm-probes': { type: 'boolean' },
  'ssh-config': { type: 'string' },
  'break-lock': { type: 'boolean' },
  lease: { type: 'string' },
  'drain-timeout': { type: 'string' },
  'action-log': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

// Human summary of the result on stdout.
function printResult(io: CliIo, r: TuneCommandResult): void {
  const out = {
    write: (t: string): void => {
      io.stdout.write(redactText(t));
    },
  };
  if (r.kind === 'dry-run') {
    const p = r.plan;
    for (const l of p.locks ?? []) out.write(`warning: ${l}\n`);
    if (p.resume) out.write(`resume:\n${p.resume.map((l) => `  ${l}`).join('\n')}\n`);
    out.write(`baseline (in force): ${formatConfig(p.baseline)}\n`);
    p.proposals.forEach((x, i) => {
      out.write(`proposal ${i + 1}: ${formatConfig(x.config)} (${x.reason})\n`);
    });
    out.write(p.firstDeploy ? `\nfirst deploy:\n${p.firstDeploy}\n` : 'nothing to deploy\n');
    return;
  }
  const c = r.result;
  out.write(`${c.summary}\n`);
  if (c.status !== 'interrupted') out.write(`\nfor the team chat:\n${formatChatSummary(c)}\n`);
  if (c.deployed)
    out.write(
      'parallel' in c
        ? `\nthe winner as a Slurm job (sbatch --parsable < script):\n${c.deployed}\n`
        : `\nservice now runs:\n${c.deployed}\n`,
    );
  if (c.status === 'interrupted') out.write('interrupted: run `spectune tune --resume` to continue\n');
}

// Entry point of `spectune tune`.
export const run: Command = async (argv, io) => {
  const { values } = parseFlags(argv, FLAGS, USAGE);
  if (values.help) {
    io.stdout.write(`${USAGE}\n`);
    return EXIT.ok;
  }
  const configPath = values.config ?? 'spectune.yaml';
  const json = values.json === true;
  const ac = new AbortController();
  setMaxListeners(MAX_ABORT_LISTENERS, ac.signal);
  ignoreBrokenOutput(io.stdout, io.stderr);
  const signals = handleInterrupts(ac, {
    proc: process,
    say: (l) => {
      try {
        io.stderr.write(`${l}\n`);
      } catch {
        /* a closed terminal */
      }
    },
    exit: (c) => process.exit(c),
    leaseNote: 'it restores known-good within target.lease, default 5 min',
  });
  const renderer = createRenderer(chooseRenderMode({ json, isTTY: io.stderr.isTTY, env: io.env }), io.stderr);
  try {
    const r = await runTuneCommand({
      configPath,
      baseDir: dirname(configPath),
      resume: values.resume === true,
      dryRun: values['dry-run'] === true,
      restore: values.restore === true,
      sshConfig: values['ssh-config'],
      confirmProbes: values['confirm-probes'] === true,
      breakLock: values['break-lock'] === true,
      leaseMs: parseLease(values.lease),
      drainTimeoutMs: parseDrainTimeout(values['drain-timeout']),
      actionLogPath: values['action-log'],
      env: io.env,
      onEvent: renderer.onEvent.bind(renderer),
      signal: ac.signal,
    }).finally(() => renderer.close());
    if (json) io.stdout.write(`${JSON.stringify(redactValue(r.kind === 'dry-run' ? r.plan : toTuneJson(r.result)))}\n`);
    else printResult(io, r);
    if (r.kind === 'dry-run') return EXIT.ok;
    if (r.result.status === 'interrupted') return signals.received ? SIGNAL_EXIT[signals.received] : EXIT_INTERRUPTED;
    return r.result.status === 'done' ? EXIT.ok : EXIT.failure;
  } finally {
    signals.dispose();
  }
};
