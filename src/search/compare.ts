// Measurement discipline (after vitest's doctor): decide by the median, a candidate must beat the incumbent by the
// noise margin, near-ties are measured again, and a tie goes to the incumbent (the safer, default-side setting).

// A candidate may take this many times the baseline's benchmark time before it is cut: slower configs still finish,
// a hung one does not eat the campaign.
export const CANDIDATE_TIMEOUT_FACTOR = 3;

/** The outcome of comparing an incumbent (a) with a candidate (b). */
export interface Comparison {
  winner: 'a' | 'b' | 'tie';
  /** Relative gain of b over a by median, in the goal's direction (+0.05 = b is 5% better). */
  gain: number;
  /** |gain| within the margin: a repeat measurement could change the decision. */
  nearTie: boolean;
}

// Median of a non-empty list (mean of the middle two for even lengths).
export function median(values: readonly number[]): number {
  if (!values.length) throw new RangeError('median of no values');
  const s = [...values].sort((x, y) => x - y);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

// The margin for medians of na and nb runs: `margin` is what noise can show between two single runs, and the noise
// of a difference of medians shrinks like sqrt(2 / (na + nb)); so repeats can settle a near-tie, not only confirm it.
export function effectiveMargin(margin: number, na: number, nb: number): number {
  return margin * Math.sqrt(2 / Math.max(2, na + nb));
}

// Compare candidate samples b against incumbent samples a; b must beat a by more than the (effective) margin to win.
export function compare(
  a: readonly number[],
  b: readonly number[],
  margin: number,
  goal: 'maximize' | 'minimize' = 'maximize',
): Comparison {
  const ma = median(a);
  const mb = median(b);
  const raw = ma === 0 ? (mb === 0 ? 0 : Math.sign(mb) * Infinity) : (mb - ma) / Math.abs(ma);
  const gain = goal === 'maximize' ? raw : -raw;
  const m = effectiveMargin(margin, a.length, b.length);
  return { winner: gain > m ? 'b' : gain < -m ? 'a' : 'tie', gain, nearTie: Math.abs(gain) <= m };
}

// Whether b should be measured again before deciding (a near-tie, and repeats left).
export function needsRepeat(c: Comparison, measurements: number, maxRepeats: number): boolean {
  return c.nearTie && measurements < maxRepeats;
}

// Time limit for benchmarking a candidate, from the baseline's benchmark time.
export function candidateTimeoutMs(baselineMs: number): number {
  return baselineMs * CANDIDATE_TIMEOUT_FACTOR;
}
