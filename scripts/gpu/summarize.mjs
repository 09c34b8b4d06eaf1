#!/usr/bin/env node
// Sum up a GPU campaign's results folder (scripts/gpu/campaign.sh) into summary.json and summary.md: grid vs
// adaptive search (trials, restarts, regret), output tok/s of every n-max at every concurrency next to the target
// without speculation, the best n-max per concurrency, where speculation stops paying, GPU memory per config
// (peak nvidia-smi memory.used while the config was benchmarked) and each campaign's winner under its objective and
// constraints. Usage: node scripts/gpu/summarize.mjs RESULTS_DIR   (run `npm run build` first)
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { loadReportInput } = await import(join(root, 'dist', 'app', 'report.js'));
const { openStore } = await import(join(root, 'dist', 'store', 'index.js'));
const dir = process.argv[2] ?? './gpu-results';
const KEY = 'spec_draft_n_max';
const readJson = (f) => (existsSync(f) ? JSON.parse(readFileSync(f, 'utf8')) : null);
const round = (v, d = 1) =>
  v === null || v === undefined || !Number.isFinite(v) ? null : Math.round(v * 10 ** d) / 10 ** d;

// GPU memory samples: "epochSeconds,MiB" lines.
const mem = existsSync(join(dir, 'gpu-mem.csv'))
  ? readFileSync(join(dir, 'gpu-mem.csv'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(',').map(Number))
      .filter(([t, m]) => Number.isFinite(t) && Number.isFinite(m))
  : [];
// A trial's window starts while the previous config still runs (deploy, restart): its memory is read in the second
// half of the window (the benchmark), as the peak there.
const peakMiB = (fromMs, toMs) => {
  const mid = (fromMs + toMs) / 2;
  const v = mem.filter(([t]) => t * 1000 >= mid && t * 1000 <= toMs).map(([, m]) => m);
  return v.length ? Math.max(...v) : null;
};

// One campaign folder: its trials, result and memory per config.
function loadCampaign(name) {
  const store = join(dir, name, 'store.db');
  if (!existsSync(store)) return null;
  const db = openStore(store);
  try {
    const input = loadReportInput(db);
    const result = readJson(join(dir, name, 'tune.json'));
    const trials = input.trials.map((t) => ({
      seq: t.seq,
      nMax: t.params[KEY],
      purpose: t.purpose,
      state: t.state,
      objective: t.objective,
      constraintsOk: t.constraintsOk,
      runs: Object.fromEntries(
        t.runs.map((r) => [
          r.concurrency,
          {
            out: r.outputTokensPerSec,
            decode: r.decodeTokensPerSec.mean,
            ttft: r.ttftMs.mean,
            accept: r.acceptLength,
            acceptRate: r.acceptRate ?? null,
            acceptSource: r.acceptSource ?? null,
          },
        ]),
      ),
      gpuMiB: peakMiB(Date.parse(t.startedAt), t.finishedAt ? Date.parse(t.finishedAt) : Date.now()),
    }));
    const best = result?.best ? { nMax: result.best.config[KEY], objective: round(result.best.objective) } : null;
    return {
      name,
      config: input.campaign.config,
      trials,
      restarts: result?.restarts ?? null,
      summary: input.campaign.summary ?? result?.summary ?? null,
      best,
      status: result?.status ?? input.campaign.status,
    };
  } finally {
    db.close();
  }
}

// Mean of a config's measured trials at one concurrency.
function byConfig(c, conc, field) {
  const out = new Map();
  for (const t of c.trials.filter((x) => x.state === 'measured' && x.runs[conc])) {
    const a = out.get(t.nMax) ?? [];
    a.push(t.runs[conc][field]);
    out.set(t.nMax, a);
  }
  return new Map([...out].map(([k, v]) => [k, v.reduce((s, x) => s + x, 0) / v.length]));
}

const nospec = readJson(join(dir, 'nospec.json'));
const campaigns = readdirSync(dir)
  .filter((n) => existsSync(join(dir, n, 'store.db')))
  .map(loadCampaign)
  .filter(Boolean);
const grid = campaigns.find((c) => c.name === 'good-grid');
const adaptive = campaigns.find((c) => c.name === 'good-adaptive');
const concs = nospec?.runs.map((r) => r.concurrency) ?? [1, 4, 16, 64];
const nospecMem = existsSync(join(dir, 'gpu-mem-configs.csv'))
  ? Number(
      readFileSync(join(dir, 'gpu-mem-configs.csv'), 'utf8')
        .split('\n')
        .find((l) => l.startsWith('nospec,'))
        ?.split(',')[1],
    )
  : null;

// Per concurrency: every n-max's output tok/s (grid, else adaptive), the best, and the no-speculation reference.
const table = grid ?? adaptive;
const perConcurrency = concs.map((conc) => {
  const out = table ? byConfig(table, conc, 'out') : new Map();
  const dec = table ? byConfig(table, conc, 'decode') : new Map();
  const ns = nospec?.runs.find((r) => r.concurrency === conc) ?? null;
  const bestN = [...out].sort((a, b) => b[1] - a[1])[0] ?? null;
  return {
    concurrency: conc,
    nospec: ns ? { out: round(ns.outputTokensPerSec), decode: round(ns.decodeTokensPerSec.mean) } : null,
    byNMax: Object.fromEntries(
      [...out].sort((a, b) => a[0] - b[0]).map(([k, v]) => [k, { out: round(v), decode: round(dec.get(k)) }]),
    ),
    best: bestN
      ? {
          nMax: bestN[0],
          out: round(bestN[1]),
          vsNospec: ns ? round((bestN[1] / ns.outputTokensPerSec - 1) * 100) : null,
        }
      : null,
  };
});
const stopsPaying = perConcurrency.find((p) => p.best && p.nospec && p.best.out <= p.nospec.out)?.concurrency ?? null;

// Regret of the adaptive winner: its config's grid measurement against the grid's best, on the objective.
let regret = null;
if (grid && adaptive?.best && grid.best) {
  const obj = byConfig(grid, grid.config.objective?.concurrency ?? 1, 'decode');
  const g = obj.get(grid.best.nMax);
  const a = obj.get(adaptive.best.nMax);
  if (g && a) regret = round((1 - a / g) * 100, 2);
}
const memory = Object.fromEntries(
  (table?.trials ?? []).filter((t) => t.gpuMiB !== null).map((t) => [t.nMax, t.gpuMiB]),
);
const summary = {
  gpu: existsSync(join(dir, 'gpu.csv')) ? readFileSync(join(dir, 'gpu.csv'), 'utf8').trim().split('\n')[1] : null,
  models: existsSync(join(dir, 'models.jsonl'))
    ? readFileSync(join(dir, 'models.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l))
    : [],
  cachePolicy: nospec?.cachePolicy ?? null,
  campaigns: campaigns.map((c) => ({
    name: c.name,
    status: c.status,
    trials: c.trials.length,
    restarts: c.restarts,
    best: c.best,
    summary: c.summary,
    constraints: c.config.constraints,
    objective: c.config.objective,
  })),
  searchComparison:
    grid && adaptive
      ? {
          grid: { trials: grid.trials.length, restarts: grid.restarts, best: grid.best },
          adaptive: { trials: adaptive.trials.length, restarts: adaptive.restarts, best: adaptive.best },
          regretPercent: regret,
        }
      : null,
  perConcurrency,
  speculationStopsPayingAt: stopsPaying,
  gpuMemoryMiB: { nospec: nospecMem, byNMax: memory },
  trials: Object.fromEntries(campaigns.map((c) => [c.name, c.trials])),
};
writeFileSync(join(dir, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);

// Markdown tables for docs/gpu/README.md.
const md = [];
md.push(
  '| concurrency | no speculation | ' +
    Object.keys(perConcurrency[0]?.byNMax ?? {})
      .map((k) => `n-max ${k}`)
      .join(' | ') +
    ' | best |',
);
md.push(
  '|---|---|' +
    Object.keys(perConcurrency[0]?.byNMax ?? {})
      .map(() => '---')
      .join('|') +
    '|---|',
);
for (const p of perConcurrency) {
  md.push(
    `| ${p.concurrency} | ${p.nospec?.out ?? '-'} | ${Object.values(p.byNMax)
      .map((v) => v.out ?? '-')
      .join(' | ')} | n-max ${p.best?.nMax ?? '-'} (${p.best?.vsNospec ?? '-'}% vs no spec) |`,
  );
}
md.push('', '| campaign | trials | restarts | winner | objective |', '|---|---|---|---|---|');
for (const c of summary.campaigns)
  md.push(
    `| ${c.name} | ${c.trials} | ${c.restarts ?? '-'} | n-max ${c.best?.nMax ?? '-'} | ${c.best?.objective ?? '-'} |`,
  );
md.push(
  '',
  `speculation stops paying at concurrency: ${stopsPaying ?? 'never (in the levels measured)'}; adaptive regret vs grid: ${regret ?? '-'}%`,
);
md.push(
  '',
  '| config | peak GPU memory (MiB) |',
  '|---|---|',
  `| no speculation | ${nospecMem ?? '-'} |`,
  ...Object.entries(memory).map(([k, v]) => `| n-max ${k} | ${v} |`),
);
writeFileSync(join(dir, 'summary.md'), `${md.join('\n')}\n`);
console.log(md.join('\n'));
