#!/usr/bin/env node
// Restarts and accuracy of the adaptive search against the grid, on every shipped sim profile. The oracle is the
// simulator's own pure model (src/sim/model.ts: computeCapacity, predictDecodeTokensPerSec) with seeded measurement
// noise, so no process is started: one "trial" = one restart of a simulated service.
// Usage: node bench/search-vs-grid.mjs [--seeds 20] [--noise 0.01] [--margin 2*noise] [--repeats 2] [--no-constraint] [--json]
// The default noise is the sim profiles' own jitter (1%).
// Target (issue 6): within 2% of the true optimum with at most half the grid's restarts, on every profile. Noise makes
// each campaign a draw, so the target is checked on the mean over seeds; the worst seed is printed next to it.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { judged } from './lib/smoke.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
// The gap and restart targets of the issue.
const TARGET = { gap: 0.02, restartRatio: 0.5 };
// SGLang's auto choice when only the algorithm is given: the usual "config in force" before tuning.
const BASELINE_STEPS = 3;
// The seed's constraint: aggregate tok/s at concurrency 16 must stay within 90% of the baseline's.
const CONSTRAINT = { concurrency: 16, ratio: 0.9 };
// An operator calibrates the noise margin from repeated baseline runs: about two standard deviations of the noise.
const MARGIN_PER_NOISE = 2;

const { values: args } = parseArgs({
  options: {
    seeds: { type: 'string', default: '20' },
    noise: { type: 'string', default: '0.01' },
    margin: { type: 'string' },
    repeats: { type: 'string', default: '2' },
    json: { type: 'boolean', default: false },
    'no-constraint': { type: 'boolean', default: false },
  },
});
const SEARCH = {
  noiseMargin: args.margin ? Number(args.margin) : MARGIN_PER_NOISE * Number(args.noise),
  repeats: Number(args.repeats),
  soakRepeats: 1,
};

const lib = await loadSources();
const profiles = readdirSync(join(ROOT, 'profiles'))
  .filter((f) => f.endsWith('.json') && f !== 'profile.schema.json')
  .map((f) => JSON.parse(readFileSync(join(ROOT, 'profiles', f), 'utf8')));
const spaces = [
  { name: 'steps', dims: [{ key: 'speculative_num_steps', values: range(1, 10) }] },
  {
    name: 'steps x cuda_graph_max_bs',
    dims: [
      { key: 'speculative_num_steps', values: range(1, 10) },
      { key: 'cuda_graph_max_bs', values: [64, 128, 256, 512] },
    ],
  },
];

const rows = [];
for (const profile of profiles)
  for (const space of spaces) rows.push(benchOne(profile, space, Number(args.seeds), Number(args.noise)));
if (args.json) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
else printTable(rows);
process.exitCode = judged(rows.every((r) => r.pass));

// The pure modules the benchmark needs (search + sim model), from the built package (`npm run build`): a copied
// source list went stale once (src/random.ts was not in it) and failed on a clean checkout.
async function loadSources() {
  const imp = (p) =>
    import(pathToFileURL(join(ROOT, 'dist', p)).href).catch(() => {
      console.error(`bench/search-vs-grid.mjs: dist/${p} is missing: run \`npm run build\` first`);
      process.exit(2);
    });
  return {
    search: await imp('search/index.js'),
    model: await imp('sim/model.js'),
    settings: await imp('sim/settings.js'),
  };
}

function range(a, b) {
  return Array.from({ length: b - a + 1 }, (_, i) => a + i);
}

// The noise-free truth of one config: does it start, its objective (decode tok/s at concurrency 1), c16 throughput.
function truth(profile, params) {
  const s = lib.settings.resolveSettings(profile, { speculative_algorithm: 'EAGLE', ...params });
  const cap = lib.model.computeCapacity(profile, s);
  if (!cap.ok) return { ok: false, cap };
  const b = Math.min(CONSTRAINT.concurrency, cap.maxRunningRequests);
  return {
    ok: true,
    cap,
    objective: lib.model.predictDecodeTokensPerSec(profile, s, 1),
    c16: b * lib.model.predictDecodeTokensPerSec(profile, s, b),
  };
}

// A seeded Gaussian (Box-Muller over the search's own PRNG).
function gaussian(rand) {
  return Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
}

// The simulated service: measured values carry multiplicative noise; capacity facts are exact (they are log lines).
function makeOracle(profile, baseline, noise, seed) {
  const base = truth(profile, baseline);
  return (params, n) => {
    const t = truth(profile, params);
    if (!t.ok) return { status: 'failed', objective: null, verdict: { class: 'kv_cache_oom' } };
    const rand = lib.search.mulberry32(seed * 1_000_003 + n);
    const objective = t.objective * (1 + noise * gaussian(rand));
    const c16 = t.c16 * (1 + noise * gaussian(rand));
    const capacity = {
      maxTotalNumTokens: t.cap.maxTotalNumTokens,
      maxRunningRequests: t.cap.maxRunningRequests,
      availableGpuMemGb: t.cap.availableGpuMemGb,
    };
    return {
      status: 'ok',
      objective,
      constraintsOk: args['no-constraint'] || c16 >= CONSTRAINT.ratio * base.c16,
      capacity,
    };
  };
}

// The true optimum over the grid: feasible, meeting the constraint without noise.
function optimum(profile, dims, baseline) {
  const base = truth(profile, baseline);
  let best = null;
  for (let i = 0; i < lib.search.gridSize(dims); i++) {
    const p = lib.search.gridPoint(dims, baseline, i);
    const t = truth(profile, p);
    if (
      t.ok &&
      (args['no-constraint'] || t.c16 >= CONSTRAINT.ratio * base.c16) &&
      (!best || t.objective > best.objective)
    )
      best = { params: p, objective: t.objective };
  }
  return best;
}

// The gap of a chosen config to the optimum (1 = chose nothing usable).
function gapOf(profile, chosen, opt) {
  if (!chosen) return 1;
  const t = truth(profile, chosen);
  return t.ok ? Math.max(0, (opt.objective - t.objective) / opt.objective) : 1;
}

function benchOne(profile, space, seeds, noise) {
  const baseline = {
    speculative_num_steps: BASELINE_STEPS,
    ...(space.dims.length > 1 ? { cuda_graph_max_bs: profile.defaults.cuda_graph_max_bs } : {}),
  };
  const defaults = { cuda_graph_max_bs: profile.defaults.cuda_graph_max_bs };
  const opt = optimum(profile, space.dims, baseline);
  const budget = { trials: 200 };
  const base = { goal: 'maximize', baseline, ...SEARCH };
  const predict = (h, p) => lib.search.predictFeasibility(h, p, { defaults, space: space.dims });
  const runs = { adaptive: [], adaptiveNoPredictor: [], grid: [] };
  for (let seed = 1; seed <= seeds; seed++) {
    const oracle = makeOracle(profile, baseline, noise, seed);
    const a = lib.search.driveSearch(oracle, space.dims, budget, { ...base, strategy: 'adaptive' }, predict);
    const an = lib.search.driveSearch(oracle, space.dims, budget, { ...base, strategy: 'adaptive' });
    const g = lib.search.driveSearch(oracle, space.dims, budget, { ...base, strategy: 'grid', soakRepeats: 0 });
    runs.adaptive.push({
      restarts: a.restarts,
      gap: gapOf(profile, a.best, opt),
      trials: a.trials.length,
      refused: a.trials.filter((t) => t.status === 'infeasible').length,
    });
    runs.adaptiveNoPredictor.push({
      restarts: an.restarts,
      gap: gapOf(profile, an.best, opt),
      trials: an.trials.length,
    });
    runs.grid.push({ restarts: g.restarts, gap: gapOf(profile, g.best, opt), trials: g.trials.length });
  }
  const sum = (xs, f) => ({ mean: xs.reduce((s, x) => s + f(x), 0) / xs.length, max: Math.max(...xs.map(f)) });
  const summary = Object.fromEntries(
    Object.entries(runs).map(([k, xs]) => [
      k,
      { restarts: sum(xs, (x) => x.restarts), gap: sum(xs, (x) => x.gap), trials: sum(xs, (x) => x.trials) },
    ]),
  );
  const half = TARGET.restartRatio * summary.grid.restarts.mean;
  const pass = summary.adaptive.gap.mean <= TARGET.gap && summary.adaptive.restarts.mean <= half;
  const worstPass = summary.adaptive.gap.max <= TARGET.gap && summary.adaptive.restarts.max <= half;
  return {
    profile: profile.name,
    space: space.name,
    optimum: opt,
    seeds,
    noise,
    margin: SEARCH.noiseMargin,
    summary,
    pass,
    worstPass,
  };
}

function printTable(rows) {
  const f = (x, d = 1) => x.toFixed(d);
  const pc = (x) => `${(x * 100).toFixed(1)}%`;
  const constraint = args['no-constraint']
    ? 'no constraint'
    : `constraint: tok/s @c${CONSTRAINT.concurrency} >= ${CONSTRAINT.ratio * 100}% of baseline`;
  console.log(
    `search vs grid: ${rows[0]?.seeds} noise seeds, noise ${pc(rows[0]?.noise ?? 0)}, margin ${pc(SEARCH.noiseMargin)}, baseline steps=${BASELINE_STEPS}, ${constraint}`,
  );
  console.log(
    'restarts = deploys + rollbacks after failures + landing on the winner; gap = true objective of the pick vs the true optimum\n',
  );
  console.log(
    [
      'profile',
      'space',
      'optimum',
      'grid restarts',
      'adaptive restarts mean/max',
      'no-predictor mean/max',
      'adaptive gap mean/max',
      'grid gap max',
      'target (mean)',
      'every seed',
    ].join(' | '),
  );
  for (const r of rows) {
    const s = r.summary;
    const optText = r.optimum
      ? `${Object.entries(r.optimum.params)
          .map(([k, v]) => `${k.replace('speculative_num_', '').replace('cuda_graph_max_', '')}=${v}`)
          .join(',')} (${f(r.optimum.objective)})`
      : 'none';
    console.log(
      [
        r.profile,
        r.space,
        optText,
        f(s.grid.restarts.mean),
        `${f(s.adaptive.restarts.mean)}/${s.adaptive.restarts.max}`,
        `${f(s.adaptiveNoPredictor.restarts.mean)}/${s.adaptiveNoPredictor.restarts.max}`,
        `${pc(s.adaptive.gap.mean)}/${pc(s.adaptive.gap.max)}`,
        pc(s.grid.gap.max),
        r.pass ? 'PASS' : 'MISS',
        r.worstPass ? 'yes' : 'no',
      ].join(' | '),
    );
  }
}
