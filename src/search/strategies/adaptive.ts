// The adaptive strategy: baseline, then one setting at a time (climb, refine, plateau, probe, bisect), then a soak
// of the winner. Written as a sequential algorithm and replayed against the history on every call (pure).
import { compare, median } from '../compare.js';
import { configKey, observe, Replay, type Observation } from '../history.js';
import type { HistoryEntry, Params, Proposal, SearchOptions, SearchSpace } from '../types.js';
import { axisValues, probe, refine, stride, type Axis, type ClimbState } from './climb.js';

// A soak is one run judged against the search's median, so its noise is ~1.4× a comparison's; it must catch a
// degrading or crashing winner, not noise: it fails only below the median by more than this many noise margins.
export const SOAK_TOLERANCE_MARGINS = 2;

/** Result of the search proper (before the soak). */
interface Outcome {
  best: Params;
  obs: Observation;
}

// Climb one setting: up first; down only when up was impossible or did not help at the first step.
function climbAxis(s: ClimbState, ax: Axis): void {
  const start = ax.vals.indexOf(s.best[ax.key]);
  const up = stride(s, ax, 1);
  let moved = ax.vals.indexOf(s.best[ax.key]) !== start;
  if (up) {
    const r = refine(s, ax, up, 1);
    if (r.plateau && r.fail === null) probe(s, ax, 1);
    moved = ax.vals.indexOf(s.best[ax.key]) !== start;
  }
  if (moved || start === 0 || up?.verdict === 'tie') return;
  const down = stride(s, ax, -1);
  if (down) refine(s, ax, down, -1);
}

// Run the search proper; throws NeedTrial (via the replay) when a measurement is missing.
function searchAll(ctx: Replay, space: SearchSpace, opts: SearchOptions): Outcome | { failed: string } {
  const base = ctx.measure(opts.baseline, 'baseline', 'baseline: the config in force');
  if (base.outcome === 'failed') return { failed: 'the baseline config did not run; fix the service before tuning' };
  const s: ClimbState = { ctx, opts, best: opts.baseline, bestObs: base, seen: new Set([configKey(opts.baseline)]) };
  for (const dim of space) {
    const vals = axisValues(dim.values, s.best[dim.key]);
    if (vals.length > 1) climbAxis(s, { key: dim.key, vals });
  }
  return { best: s.best, obs: s.bestObs };
}

// How far a config is from the baseline: settings changed, then the total numeric distance (ties go to the nearest).
function distanceFrom(p: Params, base: Params): [number, number] {
  let changed = 0;
  let dist = 0;
  for (const k of Object.keys(p)) {
    if (p[k] === base[k]) continue;
    changed++;
    if (typeof p[k] === 'number' && typeof base[k] === 'number') dist += Math.abs((p[k] as number) - (base[k] as number));
  }
  return [changed, dist];
}

/** Tie handling for pickBest: within the margin of the top median, the config nearest the baseline wins. */
export interface TieRule {
  margin: number;
  baseline: Params;
}

// The best usable config among those not disqualified (median, goal-aware), or null; with a tie rule, the safest
// of those within the noise margin of the top.
export function pickBest(obs: Map<string, Observation>, history: readonly HistoryEntry[], goal: SearchOptions['goal'], exclude: ReadonlySet<string>, tie?: TieRule): Params | null {
  const cands = new Map<string, { p: Params; m: number; n: number }>();
  for (const h of history) {
    const k = configKey(h.config);
    const o = obs.get(k);
    if (o && o.outcome === 'ok' && o.values.length && !exclude.has(k)) cands.set(k, { p: h.config, m: median(o.values), n: o.values.length });
  }
  const all = [...cands.values()].sort((x, y) => (goal === 'maximize' ? y.m - x.m : x.m - y.m));
  if (!all.length) return null;
  if (!tie) return all[0].p;
  const top = all[0];
  const tied = all.filter((c) => c === top || compare([top.m], [c.m], tie.margin, goal).winner === 'tie');
  const near = (c: { p: Params }) => distanceFrom(c.p, tie.baseline);
  return tied.reduce((b, c) => { const [x, y] = [near(c), near(b)]; return x[0] < y[0] || (x[0] === y[0] && x[1] < y[1]) ? c : b; }).p;
}

// Soak the winner; a winner whose soak fails (crash, or worse than its search median by the margin) is replaced.
function soakWinner(first: Params, history: readonly HistoryEntry[], opts: SearchOptions, obs: Map<string, Observation>): Proposal {
  const soaks = observe(history.filter((h) => h.kind === 'soak'), true);
  const rejected = new Set<string>();
  let cand: Params | null = first;
  while (cand) {
    const k = configKey(cand);
    const so = soaks.get(k);
    const n = so ? so.values.length + (so.outcome === 'failed' ? 1 : 0) : 0;
    const ok = so?.outcome === 'ok' && compare(obs.get(k)?.values ?? so.values, so.values, opts.noiseMargin * SOAK_TOLERANCE_MARGINS, opts.goal).winner !== 'a';
    if (so && !ok) {
      rejected.add(k);
      cand = pickBest(obs, history, opts.goal, rejected);
      continue;
    }
    if (n < opts.soakRepeats) return { done: false, params: cand, purpose: 'soak', reason: `stability soak ${n + 1}/${opts.soakRepeats} of the winner`, confirmProbe: false };
    return { done: true, reason: rejected.size ? `winner after ${rejected.size} failed soak(s)` : 'search converged; winner soaked', best: cand };
  }
  return { done: true, reason: 'every candidate failed its soak; keep the baseline', best: null };
}

// Next trial of the adaptive search, or done with the winner.
export function proposeAdaptive(history: readonly HistoryEntry[], space: SearchSpace, opts: SearchOptions, ctx: Replay): Proposal {
  const r = searchAll(ctx, space, opts);
  if ('failed' in r) return { done: true, reason: r.failed, best: null };
  if (opts.soakRepeats > 0) return soakWinner(r.best, history, opts, ctx.obs);
  return { done: true, reason: 'search converged', best: r.best };
}
