// `spectune history`: the kept drop-in versions of the unit and the exact `rollback --to N` lines. Changes nothing.
import { readHistory, type UnitHistory } from '../../app/history.js';
import { TARGET_FLAGS, TARGET_USAGE } from '../../app/service-target.js';
import { redactText, redactValue } from '../../redact.js';
import { parseFlags } from '../args.js';
import { EXIT } from '../exit.js';
import type { Command } from '../io.js';
import { resolveCommandTarget } from '../target.js';

const USAGE = `usage: spectune history [--json]
  The kept versions of spectune's drop-in for the unit (what \`spectune rollback --to N\` accepts): number, date,
  current / known-good / in force, what each changes against the operator's unit, and the rollback line. Changes nothing.
  --json   as JSON (default: text)
${TARGET_USAGE}
examples:
  spectune history --host root@gpu1 --unit sglang-qwen
  spectune history -c spectune.yaml --rank 1`;
const FLAGS = { ...TARGET_FLAGS, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } as const;

// The text of one rank's history.
export function formatHistory(h: UnitHistory, multi: boolean): string {
  const lines = [
    `${multi ? `rank${h.rank} ` : ''}${h.host} ${h.unit}: current ${h.current ?? 'not recorded'}, known-good ${h.good ?? 'not recorded'}`,
  ];
  if (!h.versions.length) lines.push('  no kept versions (spectune never deployed to this unit)');
  for (const v of h.versions) {
    const tags = [v.current && 'current', v.good && 'known-good', v.inForce && 'in force'].filter(Boolean).join(', ');
    lines.push(
      `  ${String(v.version).padStart(3)}  ${v.date ?? '?'}${tags ? `  [${tags}]` : ''}`,
      `       ${v.changes}`,
      `       ${v.rollback}`,
    );
  }
  lines.push(`  none: the operator's unit alone`, `       ${h.none}`);
  return `${lines.join('\n')}\n`;
}

// Entry point of `spectune history`.
export const run: Command = async (argv, io) => {
  const { values } = parseFlags(argv, FLAGS, USAGE);
  if (values.help) {
    io.stdout.write(`${USAGE}\n`);
    return EXIT.ok;
  }
  const target = await resolveCommandTarget(values, io);
  const all = await readHistory(target, () => {});
  if (values.json) io.stdout.write(`${JSON.stringify(redactValue(all.length === 1 ? all[0] : all), null, 2)}\n`);
  else io.stdout.write(redactText(all.map((h) => formatHistory(h, all.length > 1)).join('\n')));
  return EXIT.ok;
};
