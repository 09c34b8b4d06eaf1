// One-dimension moves of the adaptive search: climb with a doubling stride, refine the bracket around the best,
// probe beyond a plateau once, and bisect a failure boundary. Each move asks the replay for measurements.
import type { ParamValue } from '../../engines/types.js';
import { compare, median, needsRepeat } from '../compare.js';
import { configKey, type Observation, type Replay } from '../history.js';
import type { Params, Purpose, SearchOptions } from '../types.js';
import { nextInBracket } from './bracket.js';

/** How a candidate fared against the incumbent. */
export type Verdict = 'better' | 'worse' | 'tie' | 'failed' | 'violates';

/** The state the climb mutates: the incumbent, what is known about it, and what the algorithm has judged. */
export interface ClimbState {
  ctx: Replay;
  opts: SearchOptions;
  best: Params;
  bestObs: Observation;
  /** Configs judged so far by this run of the algorithm (replay-safe; never "is it in the history"). */
  seen: Set<string>;
}

/** One axis being climbed: a setting and its values in climbing order. */
export interface Axis {
  key: string;
  vals: ParamValue[];
}

const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)}%`;
const at = (s: ClimbState, ax: Axis, i: number): Params => ({ ...s.best, [ax.key]: ax.vals[i] });
const idxOf = (s: ClimbState, ax: Axis) => ax.vals.indexOf(s.best[ax.key]);
const show = (ax: Axis, i: number) => `${ax.key}=${String(ax.vals[i])}`;
const isBad = (v: Verdict) => v === 'failed' || v === 'violates';

// Measure a candidate (again on a near-tie, decided by median) and make it the incumbent if it wins by the margin.
export function judge(s: ClimbState, cand: Params, purpose: Purpose, reason: string, confirmProbe = false): Verdict {
  s.seen.add(configKey(cand));
  let o = s.ctx.measure(cand, purpose, reason, 1, confirmProbe);
  if (o.outcome !== 'ok') return o.outcome;
  if (s.bestObs.outcome !== 'ok') return adopt(s, cand, o);
  let c = compare(s.bestObs.values, o.values, s.opts.noiseMargin, s.opts.goal);
  for (;;) {
    if (needsRepeat(c, o.values.length, s.opts.repeats)) {
      o = s.ctx.measure(
        cand,
        'repeat',
        `${reason}: within noise of the incumbent (${pct(c.gain)}), measure again`,
        o.values.length + 1,
      );
      if (o.outcome !== 'ok') return o.outcome;
    } else if (c.winner !== 'b' && isBaseline(s) && s.bestObs.values.length < o.values.length) {
      // the candidate was measured again and still does not win against the baseline: the baseline gets as many runs
      // before it keeps its place. It is the one config measured on the service as found (not restarted by spectune),
      // and one lucky run of it would otherwise stop the climb for good (seen in CI on llama-server: n-max 1 kept)
      const inc = s.ctx.measure(
        s.best,
        'repeat',
        `${reason}: the incumbent measured again to match the candidate's ${o.values.length} runs`,
        s.bestObs.values.length + 1,
      );
      if (inc.outcome !== 'ok') return adopt(s, cand, o);
      s.bestObs = inc;
    } else break;
    c = compare(s.bestObs.values, o.values, s.opts.noiseMargin, s.opts.goal);
  }
  if (c.winner === 'b') return adopt(s, cand, o);
  return c.winner === 'a' ? 'worse' : 'tie';
}

// Whether the incumbent is still the baseline config.
function isBaseline(s: ClimbState): boolean {
  return configKey(s.best) === configKey(s.opts.baseline);
}

// Make a candidate the incumbent.
function adopt(s: ClimbState, cand: Params, o: Observation): Verdict {
  s.best = cand;
  s.bestObs = o;
  return 'better';
}

// The values of one axis in climbing order, with the incumbent's value included (it may lie off the grid).
export function axisValues(values: readonly ParamValue[], current: ParamValue): ParamValue[] {
  const all = values.includes(current) ? [...values] : [...values, current];
  return all.every((v) => typeof v === 'number') ? (all as number[]).sort((a, b) => a - b) : all;
}

/** Where a stride stopped: the index that did not win, its verdict, and the incumbent before the last win. */
export interface Stop {
  idx: number;
  verdict: Verdict;
  prev: number | null;
}

// Step away from the incumbent with a doubling stride while each step wins (few restarts to cross a long rising
// slope; the bracket left behind is refined afterwards); null when it ran to the end.
export function stride(s: ClimbState, ax: Axis, d: 1 | -1): Stop | null {
  const last = d > 0 ? ax.vals.length - 1 : 0;
  const path = [idxOf(s, ax)];
  let step = 1;
  while (idxOf(s, ax) !== last) {
    const from = idxOf(s, ax);
    const j = d > 0 ? Math.min(from + step, last) : Math.max(from - step, last);
    const v = judge(
      s,
      at(s, ax, j),
      'climb',
      `${d > 0 ? 'climb' : 'step down'} ${ax.key} ${String(ax.vals[from])} → ${String(ax.vals[j])}`,
    );
    if (v !== 'better') return { idx: j, verdict: v, prev: path.length > 1 ? path[path.length - 2] : null };
    path.push(j);
    step *= 2;
  }
  return null;
}

// Goal-signed median of a judged index (higher = better), null when failed or unjudged.
function signedValue(s: ClimbState, ax: Axis, i: number): number | null {
  const p = at(s, ax, i);
  if (!s.seen.has(configKey(p))) return null;
  const o = s.ctx.peek(p);
  if (o?.outcome !== 'ok' || !o.values.length) return null;
  return s.opts.goal === 'maximize' ? median(o.values) : -median(o.values);
}

// Whether an index is within noise of the incumbent.
function ties(s: ClimbState, ax: Axis, i: number): boolean {
  const o = s.ctx.peek(at(s, ax, i));
  return (
    !!o &&
    o.outcome === 'ok' &&
    s.bestObs.outcome === 'ok' &&
    compare(s.bestObs.values, o.values, s.opts.noiseMargin, s.opts.goal).winner === 'tie'
  );
}

// Refine the bracket around the incumbent after a stride stopped; reports a plateau and the first failing index.
export function refine(s: ClimbState, ax: Axis, stop: Stop, d: 1 | -1): { plateau: boolean; fail: number | null } {
  const b0 = idxOf(s, ax);
  let lo = d > 0 ? (stop.prev ?? b0) : stop.idx;
  let hi = d > 0 ? stop.idx : (stop.prev ?? b0);
  let fail = isBad(stop.verdict) ? stop.idx : null;
  let plateau = stop.verdict === 'tie';
  for (;;) {
    const bi = idxOf(s, ax);
    if (lo !== bi && hi !== bi && ties(s, ax, lo) && ties(s, ax, hi)) return { plateau: true, fail };
    const x = nextInBracket({
      lo,
      best: bi,
      hi,
      f: (i) => signedValue(s, ax, i),
      seen: (i) => s.seen.has(configKey(at(s, ax, i))),
    });
    if (x === null) return { plateau, fail };
    const towardFail = fail !== null && (x - bi) * (fail - bi) > 0;
    const why = towardFail
      ? `bisect the failure boundary of ${ax.key} between ${String(ax.vals[bi])} (ok) and ${String(ax.vals[fail as number])} (failed)`
      : `refine ${ax.key} between ${String(ax.vals[Math.min(lo, hi)])} and ${String(ax.vals[Math.max(lo, hi)])} around ${String(ax.vals[bi])}`;
    const v = judge(s, at(s, ax, x), towardFail ? 'bisect' : 'refine', why);
    if (v === 'better') {
      if (x < bi) hi = bi;
      else lo = bi;
      continue;
    }
    if (v === 'tie') plateau = true;
    if (isBad(v) && (fail === null || Math.abs(x - bi) < Math.abs(fail - bi))) fail = x;
    if (x < bi) lo = x;
    else hi = x;
  }
}

// The furthest judged usable index from the incumbent towards `before`, and whether it was not worse.
function lastGood(s: ClimbState, ax: Axis, d: 1 | -1, before: number): { idx: number; promising: boolean } {
  let idx = idxOf(s, ax);
  for (let i = idx + d; d > 0 ? i < before : i > before; i += d) if (signedValue(s, ax, i) !== null) idx = i;
  return { idx, promising: idx === idxOf(s, ax) || ties(s, ax, idx) };
}

// After a plateau: jump to the far end once ("see if we unplateau"); on failure, bisect the boundary.
export function probe(s: ClimbState, ax: Axis, d: 1 | -1): void {
  const far = d > 0 ? ax.vals.length - 1 : 0;
  const bi = idxOf(s, ax);
  if (Math.abs(far - bi) <= 1) return;
  const v = judge(
    s,
    at(s, ax, far),
    'probe',
    `probe ${show(ax, far)} beyond the plateau at ${show(ax, bi)} (see if it unplateaus)`,
    s.opts.confirmProbes === true,
  );
  if (v === 'better') {
    refine(s, ax, { idx: bi, verdict: 'tie', prev: null }, d > 0 ? -1 : 1);
    return;
  }
  if (!isBad(v)) return;
  const good = lastGood(s, ax, d, far);
  if (good.promising) bisectBoundary(s, ax, good.idx, far, d);
}

// Find the first failing value between a good and a failing index; a better value on the way becomes the incumbent.
function bisectBoundary(s: ClimbState, ax: Axis, good: number, bad: number, d: 1 | -1): void {
  while (Math.abs(bad - good) > 1) {
    const mid = good + d * Math.floor(Math.abs(bad - good) / 2);
    const why = `bisect the failure boundary of ${ax.key} between ${String(ax.vals[good])} (ok) and ${String(ax.vals[bad])} (failed)`;
    const v = judge(s, at(s, ax, mid), 'bisect', why);
    if (isBad(v)) bad = mid;
    else if (v === 'worse') return;
    else good = mid;
  }
}
