// `spectune logs`: the journal of the current start, of deploy N (--trial N), or since a time.
import { readServiceLogs } from '../../app/logs.js';
import { TARGET_FLAGS, TARGET_USAGE } from '../../app/service-target.js';
import { redactText, redactValue } from '../../redact.js';
import { numberFlag, parseFlags } from '../args.js';
import { EXIT } from '../exit.js';
import type { Command } from '../io.js';
import { resolveCommandTarget } from '../target.js';

const USAGE = `usage: spectune logs [--trial N] [--since TIME] [--json]
  --trial N     the journal of deploy N (each \`spectune apply\` is one; default: the latest)
  --since TIME  a journalctl time ("-10min", "2026-03-09 22:28", "@1767600000") instead (default: the last hour
                when there is no deploy history)
  --json        journal entries as JSON (default: journalctl short text)
  A multi-host target: every rank's journal (each rank's own deploy N), merged in time order; --rank N: one rank.
${TARGET_USAGE}
examples:
  spectune logs --host root@gpu1 --unit sglang-qwen
  spectune logs --host root@gpu1 --unit sglang-qwen --trial 3`;
const FLAGS = { ...TARGET_FLAGS, trial: { type: 'string' }, since: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } as const;

// Entry point of `spectune logs`.
export const run: Command = async (argv, io) => {
  const { values } = parseFlags(argv, FLAGS, USAGE);
  if (values.help) { io.stdout.write(`${USAGE}\n`); return EXIT.ok; }
  const trial = values.trial === undefined ? undefined : numberFlag('trial', values.trial, NaN);
  const target = await resolveCommandTarget(values, io);
  const r = await readServiceLogs(target, { trial, since: values.since });
  io.stdout.write(values.json ? `${JSON.stringify(redactValue(r.entries))}\n` : redactText(r.text));
  return EXIT.ok;
};
