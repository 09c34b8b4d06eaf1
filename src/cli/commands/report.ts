// `spectune report [CAMPAIGN] [-c spectune.yaml | --db FILE] [--html FILE] [--md FILE]`: Markdown to stdout by default, or files.
import { resolveReportDb, runReport } from '../../app/report.js';
import { ToolError } from '../../errors.js';
import { redactValue } from '../../redact.js';
import { parseFlags } from '../args.js';
import { EXIT } from '../exit.js';
import type { Command } from '../io.js';

const USAGE = `usage: spectune report [CAMPAIGN] [-c spectune.yaml | --db FILE] [--html FILE] [--md FILE] [--json]
  CAMPAIGN     campaign id (default: the latest)
  -c FILE      read the store named by the config's store: (relative to the config file, as tune does)
  --db FILE    the store (default ./spectune.db; wins over -c); a file that is not a spectune store is refused and left unchanged
  --html FILE  write a self-contained HTML report (inline SVG, opens offline)
  --md FILE    write the Markdown report (default: Markdown on stdout when neither --html nor --md is given)
  --json       the report's data (trials, verdicts, best, charts) as JSON on stdout
examples:
  spectune report --html report.html --md report.md
  spectune report 3 --db /var/lib/spectune/spectune.db --json`;
const FLAGS = {
  config: { type: 'string', short: 'c' },
  db: { type: 'string' },
  html: { type: 'string' },
  md: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;
// Parse the optional campaign id.
function parseCampaign(positionals: string[]): number | undefined {
  if (positionals.length > 1)
    throw new ToolError('E_USAGE', `expected at most one campaign id, got ${positionals.length}`, {
      hint: USAGE.split('\n')[0],
    });
  if (!positionals.length) return undefined;
  const id = Number(positionals[0]);
  if (!Number.isInteger(id) || id <= 0)
    throw new ToolError('E_USAGE', `campaign: expected a positive integer id, got "${positionals[0]}"`, {
      hint: USAGE.split('\n')[0],
    });
  return id;
}

// Entry point of `spectune report`.
export const run: Command = async (argv, io) => {
  const { values, positionals } = parseFlags(argv, FLAGS, USAGE, true);
  if (values.help) {
    io.stdout.write(`${USAGE}\n`);
    return EXIT.ok;
  }
  const json = values.json === true;
  const r = await runReport({
    db: await resolveReportDb({ db: values.db, config: values.config }),
    campaign: parseCampaign(positionals),
    html: values.html,
    md: values.md,
    stdoutMarkdown: !json,
  });
  if (json) io.stdout.write(`${JSON.stringify(redactValue(r.model), null, 2)}\n`);
  else if (r.markdown !== null) io.stdout.write(r.markdown);
  for (const f of r.written) io.stderr.write(`spectune: wrote ${f} (campaign ${r.campaignId})\n`);
  return EXIT.ok;
};
