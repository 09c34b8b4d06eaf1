// The one rule that names the winner, shared by propose() and the tuner's endgame: the best median, except that a
// config within the noise margin of the top and nearer the baseline wins the tie (the safer, default-side setting).
import { compare, median } from './compare.js';
import { configKey, observe, type Observation } from './history.js';
import type { HistoryEntry, Params, SearchOptions } from './types.js';

/** Tie handling: within the margin of the top median, the config nearest the baseline wins. */
export interface TieRule {
  margin: number;
  baseline: Params;
}

/** The winner and, when it is not the top median, why it still won. */
export interface Winner {
  params: Params;
  /** Median objective of the winner. */
  median: number;
  /** The config with the top median (equal to params unless a safer config tied with it). */
  top: Params;
  topMedian: number;
  /** Relative gain of the winner over the top, in the goal's direction (0 for the top itself, < 0 otherwise). */
  gain: number;
  /** Why a config below the top won ("tied within noise ..., safer: ..."), null when the top won. */
  why: string | null;
}

interface Ranked {
  p: Params;
  m: number;
}

// How far a config is from the baseline: settings changed, then the total numeric distance (ties go to the nearest).
export function distanceFrom(p: Params, base: Params): [number, number] {
  let changed = 0;
  let dist = 0;
  for (const k of Object.keys(p)) {
    if (p[k] === base[k]) continue;
    changed++;
    if (typeof p[k] === 'number' && typeof base[k] === 'number')
      dist += Math.abs((p[k] as number) - (base[k] as number));
  }
  return [changed, dist];
}

// Usable configs not excluded, by median, best first (history order among equals).
function rankCandidates(
  obs: Map<string, Observation>,
  history: readonly HistoryEntry[],
  goal: SearchOptions['goal'],
  exclude: ReadonlySet<string>,
): Ranked[] {
  const cands = new Map<string, Ranked>();
  for (const h of history) {
    const k = configKey(h.config);
    const o = obs.get(k);
    if (o && o.outcome === 'ok' && o.values.length && !exclude.has(k))
      cands.set(k, { p: h.config, m: median(o.values) });
  }
  return [...cands.values()].sort((x, y) => (goal === 'maximize' ? y.m - x.m : x.m - y.m));
}

// The tied config nearest the baseline (fewer settings changed, then fewer steps away); the first on equal footing.
function pickSafest(tied: Ranked[], baseline: Params): Ranked {
  const near = (c: Ranked) => distanceFrom(c.p, baseline);
  return tied.reduce((b, c) => {
    const [x, y] = [near(c), near(b)];
    return x[0] < y[0] || (x[0] === y[0] && x[1] < y[1]) ? c : b;
  });
}

// The settings where a differs from b, for the explanation ("speculative_num_steps=5").
function describeDiff(a: Params, b: Params): string {
  const diff = Object.keys(a)
    .filter((k) => a[k] !== b[k])
    .map((k) => `${k}=${String(a[k])}`);
  return diff.length ? diff.join(' ') : 'the same settings';
}

// Why the safer config won over the top median, in words for the summary and the report.
function explainTie(w: Ranked, top: Ranked, gain: number, tie: TieRule): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  // gain is the winner against the top (<= 0); the top measured better by -gain, so it is said with a plus sign.
  return (
    `${describeDiff(top.p, w.p)} measured +${pct(-gain)} by median, within noise (margin ${pct(tie.margin)}): ` +
    `kept the safer ${describeDiff(w.p, top.p)}, nearer the baseline`
  );
}

// The winner among usable configs not excluded (median, goal-aware), or null; with a tie rule, the safest of those
// within the noise margin of the top.
export function chooseWinner(
  obs: Map<string, Observation>,
  history: readonly HistoryEntry[],
  goal: SearchOptions['goal'],
  exclude: ReadonlySet<string>,
  tie?: TieRule,
): Winner | null {
  const all = rankCandidates(obs, history, goal, exclude);
  if (!all.length) return null;
  const top = all[0];
  const w = tie
    ? pickSafest(
        all.filter((c) => c === top || compare([top.m], [c.m], tie.margin, goal).winner === 'tie'),
        tie.baseline,
      )
    : top;
  const gain = w === top ? 0 : compare([top.m], [w.m], 0, goal).gain;
  return {
    params: w.p,
    median: w.m,
    top: top.p,
    topMedian: top.m,
    gain,
    why: w === top || !tie ? null : explainTie(w, top, gain, tie),
  };
}

// The winner's params only (what propose() reports as `best`).
export function pickBest(
  obs: Map<string, Observation>,
  history: readonly HistoryEntry[],
  goal: SearchOptions['goal'],
  exclude: ReadonlySet<string>,
  tie?: TieRule,
): Params | null {
  return chooseWinner(obs, history, goal, exclude, tie)?.params ?? null;
}

// The tie rule of a search's options: the noise margin around the config in force before the campaign.
export function tieRuleOf(opts: Pick<SearchOptions, 'noiseMargin' | 'baseline'>): TieRule {
  return { margin: opts.noiseMargin, baseline: opts.baseline };
}

// The winner of a whole history under the search's own rule (for callers outside the search, e.g. the tuner's endgame).
export function findWinner(
  history: readonly HistoryEntry[],
  opts: Pick<SearchOptions, 'goal' | 'noiseMargin' | 'baseline'>,
  exclude: ReadonlySet<string> = new Set(),
): Winner | null {
  return chooseWinner(observe(history), history, opts.goal, exclude, tieRuleOf(opts));
}
