// `spectune status`: unit state, engine settings in force (from ExecStart), health.
import { TARGET_FLAGS, TARGET_USAGE } from '../../app/service-target.js';
import { isSingleUnit, readGroupStatus, readServiceStatus } from '../../app/status.js';
import { redactText, redactValue } from '../../redact.js';
import { formatGroupStatus, formatStatus } from '../../service/render.js';
import { parseFlags } from '../args.js';
import { EXIT } from '../exit.js';
import type { Command } from '../io.js';
import { resolveCommandTarget } from '../target.js';

const USAGE = `usage: spectune status [--json]
  Unit state, the engine settings in force (read from ExecStart and drop-ins), spectune's drop-in versions, health.
  A multi-host target: every rank, rank0 first (--rank N: one). Exit 0 when the health check answers (a group:
  rank0's, and every other rank is active), 1 otherwise. Each rank shows its drop-in version and settings in force;
  a warning names every difference between the ranks. Changes nothing.
  --json   the status as JSON (default: text)
${TARGET_USAGE}
examples:
  spectune status --host root@gpu1 --unit sglang-qwen --engine sglang
  spectune status -c spectune.yaml --json
  spectune status -c spectune.yaml --rank 1`;
const FLAGS = { ...TARGET_FLAGS, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } as const;

// Entry point of `spectune status`; exit 0 when the service answers its health check, 1 otherwise.
export const run: Command = async (argv, io) => {
  const { values } = parseFlags(argv, FLAGS, USAGE);
  if (values.help) {
    io.stdout.write(`${USAGE}\n`);
    return EXIT.ok;
  }
  const target = await resolveCommandTarget(values, io);
  if (!isSingleUnit(target)) {
    const g = await readGroupStatus(target, () => {});
    io.stdout.write(values.json ? `${JSON.stringify(redactValue(g), null, 2)}\n` : formatGroupStatus(g.ranks, g));
    return g.healthy ? EXIT.ok : EXIT.failure;
  }
  const st = await readServiceStatus(target, () => {});
  io.stdout.write(
    values.json
      ? `${JSON.stringify(redactValue(st), null, 2)}\n`
      : formatStatus(st) + (st.incomplete ? redactText(`warning: ${st.incomplete}\n`) : ''),
  );
  return st.health.ok ? EXIT.ok : EXIT.failure;
};
