#!/usr/bin/env node
// The fault suite (issue 11): runs every fault module under bench/faults/ and prints one table: fault, trials,
// recovered, lost, service state after. Each module drives real test hosts (scripts/testhost) or a real store.
// Usage: node bench/faults.mjs [--short] [--only NAME[,NAME]] [--json]
//   --short: the CI version (fewer trials per fault; every module says how many). Without it, the counts.
// Needs SPECTUNE_TESTHOSTS_ENV (the hosts' env file) for modules that use hosts; a module that cannot run says why
// in its row (state "skipped: ...") and the suite fails, since a skipped fault proves nothing.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { judged } from './lib/smoke.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { values: args } = parseArgs({
  options: {
    short: { type: 'boolean', default: false },
    only: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});

// A fault module exports `fault` (a name), `describe` (one line) and `run({ short, log })`, which returns
// { trials, recovered, lost, stateAfter, notes? } where recovered/lost are counts and stateAfter a short text
// (e.g. "known-good 5/5"). `pass` (optional) overrides the default check recovered === trials && lost === 0.
const only = args.only ? new Set(args.only.split(',')) : null;
const files = readdirSync(join(ROOT, 'bench/faults'))
  .filter((f) => f.endsWith('.mjs') && !f.startsWith('_'))
  .sort();
const rows = [];
for (const f of files) {
  const mod = await import(pathToFileURL(join(ROOT, 'bench/faults', f)).href);
  if (only && !only.has(mod.fault)) continue;
  const t0 = Date.now();
  const log = (msg) => process.stderr.write(`[faults ${mod.fault}] ${msg}\n`);
  let r;
  try {
    r = await mod.run({ short: args.short, log });
  } catch (e) {
    r = {
      trials: 0,
      recovered: 0,
      lost: 0,
      stateAfter: `error: ${e instanceof Error ? e.message : String(e)}`.split('\n')[0],
      pass: false,
    };
  }
  const pass = r.pass ?? (r.trials > 0 && r.recovered === r.trials && r.lost === 0);
  rows.push({
    fault: mod.fault,
    describe: mod.describe,
    ...r,
    pass,
    seconds: Math.round((Date.now() - t0) / 100) / 10,
  });
}

if (args.json) console.log(JSON.stringify(rows, null, 2));
else printTable(rows);
process.exitCode = judged(rows.length > 0 && rows.every((r) => r.pass));

// One table, one row per fault.
function printTable(rs) {
  const head = ['fault', 'trials', 'recovered', 'lost', 'service state after', 'pass', 's'];
  const body = rs.map((r) => [
    r.fault,
    String(r.trials),
    `${r.recovered}/${r.trials}`,
    String(r.lost),
    r.stateAfter,
    r.pass ? 'yes' : 'NO',
    String(r.seconds),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells) => cells.map((c, i) => c.padEnd(widths[i])).join(' | ');
  console.log(
    `fault suite (${args.short ? 'short' : 'full'}): ${rs.filter((r) => r.pass).length}/${rs.length} faults pass`,
  );
  console.log(line(head));
  console.log(widths.map((w) => '-'.repeat(w)).join('-|-'));
  for (const b of body) console.log(line(b));
  for (const r of rs) if (r.notes) console.log(`${r.fault}: ${r.notes}`);
}
