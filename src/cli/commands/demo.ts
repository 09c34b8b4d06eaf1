// `spectune demo [--out DIR] [--json] [--keep]`: the whole tuning job on the built-in SIMULATED engine.
import { setMaxListeners } from 'node:events';
import { runDemo, type DemoResult } from '../../app/demo.js';
import { chooseRenderMode, createRenderer, formatConfig, formatDuration, verdictLabel } from '../render/index.js';
import { redactValue } from '../../redact.js';
import { numberFlag, parseFlags } from '../args.js';
import { EXIT } from '../exit.js';
import type { CliIo, Command } from '../io.js';

const USAGE = `usage: spectune demo [--out DIR] [--time-scale X] [--keep] [--json]
  Runs a tuning campaign over speculative_num_steps 1..10 on the SIMULATED SGLang engine (spectune sim, its
  Qwen3.5-122B-A10B-on-two-nodes profile) under spectune's own process manager: no GPU, no root, no systemd needed.
  Its config is examples/demo.yaml (the port is replaced with a free one).
  --out DIR        where the report, the store, the unit files and the logs go (default: a new temp dir)
  --time-scale X   real seconds per simulated second for model loads (default 0.01: a 100 s load takes 1 s)
  --keep           leave the simulated engine running on the winner after the demo (default: stop it)
  --json           NDJSON progress events on stderr, the result as JSON on stdout
examples:
  spectune demo
  spectune demo --out ./demo-out --json`;

/** 128 + SIGINT, the shell's convention for Ctrl-C. */
const EXIT_INTERRUPTED = 130;
/** Every poll of a wait listens on the Ctrl-C signal; unlimited listeners are expected, not a leak. */
const MAX_ABORT_LISTENERS = 0;

const FLAGS = {
  out: { type: 'string' },
  'time-scale': { type: 'string' },
  keep: { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

// The human ending: what was found, what failed and why, where the report is.
function printSummary(io: CliIo, r: DemoResult): void {
  const c = r.campaign;
  const failures = c.trials.filter((t) => t.status === 'failed');
  const lines = [
    '',
    `spectune demo (SIMULATED engine) finished in ${formatDuration(r.wallMs)}`,
    `  baseline:  ${c.baseline ? `trial ${c.baseline.index + 1} ${formatConfig(c.baseline.config)} -> ${c.baseline.objective?.toFixed(1)} tok/s per request` : '-'}`,
    `  ${c.status === 'interrupted' ? 'best so far:' : 'winner:   '} ${c.best ? `trial ${c.best.index + 1} ${formatConfig(c.best.config)} -> ${c.best.objective?.toFixed(1)} tok/s per request` : 'none'}`,
    ...failures.map(
      (t) =>
        `  failed:    trial ${t.index + 1} ${formatConfig(t.config)} -> ${t.verdict ? `${verdictLabel(t.verdict)}: ${t.verdict.summary}` : t.violations.join('; ')} (rolled back)`,
    ),
    `  trials:    ${c.trials.length}, service restarts: ${c.restarts} (a grid over 1..10 needs 12)`,
    `  service:   now on ${formatConfig(r.final.settings)}, ${r.final.healthy ? 'healthy' : 'NOT healthy'}`,
    `  report:    ${r.reports.markdown}`,
    `             ${r.reports.html}`,
    '',
  ];
  io.stdout.write(`${lines.join('\n')}\n`);
}

// Entry point of `spectune demo`.
export const run: Command = async (argv, io) => {
  const { values } = parseFlags(argv, FLAGS, USAGE);
  if (values.help) {
    io.stdout.write(`${USAGE}\n`);
    return EXIT.ok;
  }
  const json = values.json === true;
  const renderer = createRenderer(chooseRenderMode({ json, isTTY: io.stderr.isTTY, env: io.env }), io.stderr);
  const ac = new AbortController();
  setMaxListeners(MAX_ABORT_LISTENERS, ac.signal);
  const onSigint = () => ac.abort(new Error('interrupted by Ctrl-C'));
  process.once('SIGINT', onSigint);
  try {
    const r = await runDemo({
      outDir: values.out,
      timeScale: values['time-scale'] === undefined ? undefined : numberFlag('time-scale', values['time-scale'], NaN),
      keep: values.keep === true,
      onEvent: renderer.onEvent.bind(renderer),
      signal: ac.signal,
    });
    renderer.close();
    if (json) io.stdout.write(`${JSON.stringify(redactValue(r))}\n`);
    else printSummary(io, r);
    if (r.campaign.status === 'interrupted') return EXIT_INTERRUPTED;
    return r.campaign.status === 'done' && r.final.healthy ? EXIT.ok : EXIT.failure;
  } finally {
    renderer.close();
    process.removeListener('SIGINT', onSigint);
  }
};
