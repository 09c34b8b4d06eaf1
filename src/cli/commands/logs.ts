// `spectune logs`: the journal of the current start, of a campaign's trial N, of deploy version N, or since a time.
import { existsSync } from 'node:fs';
import { readServiceLogs } from '../../app/logs.js';
import { resolveReportDb } from '../../app/report.js';
import { TARGET_FLAGS, TARGET_USAGE } from '../../app/service-target.js';
import { redactText, redactValue } from '../../redact.js';
import { numberFlag, parseFlags } from '../args.js';
import { EXIT } from '../exit.js';
import type { Command } from '../io.js';
import { resolveCommandTarget } from '../target.js';

const USAGE = `usage: spectune logs [--trial N [--campaign ID] [--db FILE] | --version N | --since TIME] [--json]
  --trial N     the journal of trial N of the campaign, numbered as tune and \`spectune report\` show them (from its
                start to its end, as the store recorded them; the store: -c spectune.yaml's store:, or --db FILE)
  --campaign ID the campaign of --trial (default: the latest that ran a trial)
  --version N   the journal of deploy version N (the host's kept drop-ins, see \`spectune history\`; default: the
                latest)
  --since TIME  a journalctl time ("-10min", "2026-03-09 22:28", "@1767600000") instead (default: the last hour
                when there is no deploy history)
  --json        journal entries as JSON (default: journalctl short text)
  A multi-host target: every rank's journal (each rank's own deploy N), merged in time order; --rank N: one rank.
${TARGET_USAGE}
examples:
  spectune logs --host root@gpu1 --unit sglang-qwen
  spectune logs -c spectune.yaml --trial 3
  spectune logs --host root@gpu1 --unit sglang-qwen --version 3`;
const FLAGS = {
  ...TARGET_FLAGS,
  trial: { type: 'string' },
  campaign: { type: 'string' },
  db: { type: 'string' },
  version: { type: 'string' },
  since: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

// Entry point of `spectune logs`.
export const run: Command = async (argv, io) => {
  const { values } = parseFlags(argv, FLAGS, USAGE);
  if (values.help) {
    io.stdout.write(`${USAGE}\n`);
    return EXIT.ok;
  }
  const trial = values.trial === undefined ? undefined : numberFlag('trial', values.trial, NaN);
  const version = values.version === undefined ? undefined : numberFlag('version', values.version, NaN);
  const campaign = values.campaign === undefined ? undefined : numberFlag('campaign', values.campaign, NaN);
  const target = await resolveCommandTarget(values, io);
  const db =
    trial === undefined
      ? undefined
      : await resolveReportDb({
          db: values.db,
          config: values.config ?? (existsSync('spectune.yaml') ? 'spectune.yaml' : undefined),
        });
  const r = await readServiceLogs(target, { trial, campaign, db, version, since: values.since });
  io.stdout.write(values.json ? `${JSON.stringify(redactValue(r.entries))}\n` : redactText(r.text));
  return EXIT.ok;
};
