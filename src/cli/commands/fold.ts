// `spectune fold`: make the config in force the operator's own: write it into the unit file, remove spectune's
// drop-in, daemon-reload, no restart. --dry-run prints the unit file diff and the steps.
import { foldService, type FoldOutcome } from '../../app/fold.js';
import { TARGET_FLAGS, TARGET_USAGE } from '../../app/service-target.js';
import { redactText, redactValue } from '../../redact.js';
import { formatServiceEvent } from '../../service/render.js';
import { parseFlags } from '../args.js';
import { EXIT } from '../exit.js';
import type { Command } from '../io.js';
import { resolveCommandTarget } from '../target.js';

const USAGE = `usage: spectune fold [--dry-run] [--json] [--break-lock]
  Write the ExecStart (and Environment, TimeoutStopSec) of spectune's drop-in into the unit file, remove the drop-in,
  systemctl daemon-reload. No restart: systemctl show ExecStart/Environment/TimeoutStopUSec must read the same before
  and after, else everything is put back. The unit file is backed up (mode kept) in /var/lib/spectune/<unit>/.
  Only a unit file under /etc/systemd/system is rewritten (copy a /usr/lib one there first).
  --dry-run     print the unit file diff and the steps; change nothing
  --json        the outcome as JSON
  --break-lock  break a STALE lock on the unit
${TARGET_USAGE}
examples:
  spectune fold --host root@gpu1 --unit sglang-qwen --dry-run
  spectune fold --host root@gpu1 --unit sglang-qwen`;
const FLAGS = {
  ...TARGET_FLAGS,
  'dry-run': { type: 'boolean' },
  json: { type: 'boolean' },
  'break-lock': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

// The text of an outcome.
function render(r: FoldOutcome): string {
  const head =
    r.status === 'dry-run'
      ? `fold plan for ${r.plan.unitPath}:`
      : `folded ${r.plan.dropInPath} into ${r.plan.unitPath} (backup ${r.backupPath}); not restarted: the effective config is unchanged`;
  return `${[head, '', r.plan.diff || '(unit file unchanged)', 'steps:', ...r.steps.map((s, i) => `  ${i + 1}. ${s}`), ...(r.status === 'dry-run' ? ['(dry run: nothing was changed)'] : [])].join('\n')}\n`;
}

// Entry point of `spectune fold`.
export const run: Command = async (argv, io) => {
  const { values } = parseFlags(argv, FLAGS, USAGE);
  if (values.help) {
    io.stdout.write(`${USAGE}\n`);
    return EXIT.ok;
  }
  const target = await resolveCommandTarget(values, io);
  const progress = (e: Parameters<typeof formatServiceEvent>[0]) => {
    const l = formatServiceEvent(e);
    if (l) io.stderr.write(`${redactText(l)}\n`);
  };
  const r = await foldService(target, progress, {
    dryRun: values['dry-run'] === true,
    breakLock: values['break-lock'] === true,
  });
  io.stdout.write(values.json ? `${JSON.stringify(redactValue(r))}\n` : redactText(render(r)));
  return EXIT.ok;
};
