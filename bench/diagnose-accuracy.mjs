#!/usr/bin/env node
// Accuracy of `spectune diagnose` on the real-log corpus (test/corpus/real): per class and per engine, a confusion
// matrix, confident-wrong verdicts and calibration (share of each confidence level that is right), as tables.
// Each case is a log excerpt exactly as published in a public issue thread, with the cause the thread established.
// Usage: npm run build && node bench/diagnose-accuracy.mjs [--json] [--wrong] [--smoke]
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { confusion, ENGINES, loadCorpus, runCorpus, scoreRows } from './lib/diagnose-corpus.mjs';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const args = process.argv.slice(2);
const { diagnoseLogs } = await import(join(ROOT, 'dist/diagnose/index.js')).catch(() => {
  console.error('bench/diagnose-accuracy.mjs: dist/ is missing: run `npm run build` first');
  process.exit(2);
});
let cases = loadCorpus(join(ROOT, 'test/corpus/real'));
if (args.includes('--smoke')) cases = cases.filter((_, i) => i % 10 === 0);
const t0 = performance.now();
const rows = runCorpus(cases, diagnoseLogs);
const ms = performance.now() - t0;
const s = scoreRows(rows);
const pct = (x) => (Number.isNaN(x) ? '   -' : `${(100 * x).toFixed(1).padStart(5)}%`);

if (args.includes('--json')) {
  console.log(JSON.stringify({ ...s, confusion: confusion(rows), rows }, null, 2));
  process.exit(0);
}
console.log(`diagnose accuracy on ${s.cases} real cases (test/corpus/real), ${ms.toFixed(0)} ms in all\n`);
console.log('| engine | cases | right |\n|---|---:|---:|');
for (const e of ENGINES) console.log(`| ${e} | ${s.perEngine[e].cases} | ${pct(s.perEngine[e].accuracy)} |`);
console.log(`| **all** | ${s.cases} | ${pct(s.accuracy)} |`);
console.log(`| hard cases | ${s.hard.cases} | ${pct(s.hard.accuracy)} |\n`);
console.log('| class (truth) | cases | right |\n|---|---:|---:|');
for (const [k, v] of Object.entries(s.perClass)) console.log(`| ${k} | ${v.cases} | ${pct(v.accuracy)} |`);
console.log('\n| confidence | verdicts | right |\n|---|---:|---:|');
for (const [k, v] of Object.entries(s.calibration)) console.log(`| ${k} | ${v.verdicts} | ${pct(v.right)} |`);
console.log(
  `\nconfident-wrong (high and wrong): ${s.confidentWrong.length}${s.confidentWrong.length ? ` — ${s.confidentWrong.join(', ')}` : ''}`,
);
console.log(`refused inputs: ${s.refused.length}`);
console.log(`decisive line quoted in the evidence (right verdicts): ${pct(s.decisiveQuoted)}`);
const m = confusion(rows);
const cols = [...new Set(rows.map((r) => r.got))].sort();
const short = (c) => c.replace(/_/g, '').slice(0, 8);
console.log(
  `\nconfusion (rows: truth, columns: verdict)\n${'truth'.padEnd(28)}${cols.map((c) => short(c).padStart(9)).join('')}`,
);
for (const t of Object.keys(m).sort())
  console.log(`${t.padEnd(28)}${cols.map((c) => String(m[t][c] ?? '.').padStart(9)).join('')}`);
if (args.includes('--wrong')) {
  console.log('\nwrong verdicts:');
  for (const r of rows.filter((x) => !x.right))
    console.log(
      `  ${r.id}: truth ${r.truth}, got ${r.got}${r.cause ? `/${r.cause}` : ''} (${r.confidence}) — ${r.summary.slice(0, 160)}`,
    );
}
