// The adaptive strategy: baseline, then one setting at a time (climb, refine, plateau, probe, bisect), then a soak
// of the winner. Written as a sequential algorithm and replayed against the history on every call (pure).
import { compare } from '../compare.js';
import { configKey, observe, type Replay, type Observation } from '../history.js';
import type { HistoryEntry, Params, Proposal, SearchOptions, SearchSpace } from '../types.js';
import { axisValues, probe, refine, stride, type Axis, type ClimbState } from './climb.js';
import { pickBest, tieRuleOf } from '../winner.js';

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

// Soak the winner; a winner whose soak fails (crash, or worse than its search median by the margin) is replaced by
// the next one under the same tie rule.
function soakWinner(
  first: Params,
  history: readonly HistoryEntry[],
  opts: SearchOptions,
  obs: Map<string, Observation>,
): Proposal {
  const soaks = observe(
    history.filter((h) => h.kind === 'soak'),
    true,
  );
  const rejected = new Set<string>();
  let cand: Params | null = first;
  while (cand) {
    const k = configKey(cand);
    const so = soaks.get(k);
    const n = so ? so.values.length + (so.outcome === 'failed' ? 1 : 0) : 0;
    const ok =
      so?.outcome === 'ok' &&
      compare(obs.get(k)?.values ?? so.values, so.values, opts.noiseMargin * SOAK_TOLERANCE_MARGINS, opts.goal)
        .winner !== 'a';
    if (so && !ok) {
      rejected.add(k);
      cand = pickBest(obs, history, opts.goal, rejected, tieRuleOf(opts));
      continue;
    }
    if (n < opts.soakRepeats)
      return {
        done: false,
        params: cand,
        purpose: 'soak',
        reason: `stability soak ${n + 1}/${opts.soakRepeats} of the winner`,
        confirmProbe: false,
      };
    return {
      done: true,
      reason: rejected.size ? `winner after ${rejected.size} failed soak(s)` : 'search converged; winner soaked',
      best: cand,
    };
  }
  return { done: true, reason: 'every candidate failed its soak; keep the baseline', best: null };
}

// Next trial of the adaptive search, or done with the winner: the tie rule over everything measured (the climb's
// incumbent is its usual answer; a chain of ties can leave the climb on a riskier config than the rule picks).
export function proposeAdaptive(
  history: readonly HistoryEntry[],
  space: SearchSpace,
  opts: SearchOptions,
  ctx: Replay,
): Proposal {
  const r = searchAll(ctx, space, opts);
  if ('failed' in r) return { done: true, reason: r.failed, best: null };
  const best = pickBest(ctx.obs, history, opts.goal, new Set(), tieRuleOf(opts)) ?? r.best;
  if (opts.soakRepeats > 0) return soakWinner(best, history, opts, ctx.obs);
  return { done: true, reason: 'search converged', best };
}
