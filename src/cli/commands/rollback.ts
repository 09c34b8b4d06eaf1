// `spectune rollback`: back to the last known-good drop-in (or none), restart, verify readiness.
import { rollbackService } from '../../app/rollback.js';
import { TARGET_FLAGS, TARGET_USAGE } from '../../app/service-target.js';
import { DEFAULT_READY_TIMEOUT_MS, RollbackFailedError } from '../../service/index.js';
import { formatServiceEvent, formatSettings } from '../../service/render.js';
import { redactText, redactValue } from '../../redact.js';
import { parseFlags, parseReadyTimeout } from '../args.js';
import { EXIT, reportError } from '../exit.js';
import type { Command } from '../io.js';
import { resolveCommandTarget } from '../target.js';

const USAGE = `usage: spectune rollback [--json] [--ready-timeout S]\n  --ready-timeout S: start-up deadline of the known-good config in seconds (default ${DEFAULT_READY_TIMEOUT_MS / 1000})\n${TARGET_USAGE}`;
const FLAGS = { ...TARGET_FLAGS, json: { type: 'boolean' }, 'ready-timeout': { type: 'string' }, help: { type: 'boolean', short: 'h' } } as const;

// Entry point of `spectune rollback`.
export const run: Command = async (argv, io) => {
  const { values } = parseFlags(argv, FLAGS, USAGE);
  if (values.help) { io.stdout.write(`${USAGE}\n`); return EXIT.ok; }
  const readyTimeoutMs = parseReadyTimeout(values['ready-timeout']);
  const target = await resolveCommandTarget(values, io, 'rolling back');
  const progress = (e: Parameters<typeof formatServiceEvent>[0]) => { const l = formatServiceEvent(e); if (l) io.stderr.write(`${redactText(l)}\n`); };
  try {
    const r = await rollbackService(target, progress, { readyTimeoutMs });
    if (values.json) io.stdout.write(`${JSON.stringify(redactValue({ status: r.status, config: r.config, verdict: r.verdict, timeToVerdictMs: r.timeToVerdictMs }))}\n`);
    else io.stdout.write(redactText(`rolled back ${target.unit} to version ${r.version}: ready; in force: ${formatSettings(r.config)}\n`));
    return EXIT.ok;
  } catch (e) {
    if (values.json && e instanceof RollbackFailedError) {
      io.stdout.write(`${JSON.stringify(redactValue({ status: 'failed', config: {}, verdict: e.verdict, timeToVerdictMs: null }))}\n`);
    }
    return reportError(e, io);
  }
};
