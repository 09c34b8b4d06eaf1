// Choosing the next point inside a bracket lo < best < hi: parabolic interpolation through the three known values
// (Brent's idea: one restart lands near the peak), bisection when a side is unknown or failed.

/** A bracket on one axis: indices, and the objective (goal-signed, higher = better) where measured and usable. */
export interface Bracket {
  lo: number;
  best: number;
  hi: number;
  f: (i: number) => number | null;
  /** Whether an index was already judged by the algorithm (replay-safe: never "is it in the history"). */
  seen: (i: number) => boolean;
}

// Vertex of the parabola through three points, or null when they are collinear.
export function parabolaVertex(a: number, fa: number, b: number, fb: number, c: number, fc: number): number | null {
  const p = (b - a) * (fb - fc);
  const q = (b - c) * (fb - fa);
  const den = p - q;
  if (den === 0) return null;
  return b - (0.5 * ((b - a) * p - (b - c) * q)) / den;
}

// Unjudged indices strictly between two indices.
function interior(br: Bracket, from: number, to: number): number[] {
  const out: number[] = [];
  for (let i = Math.min(from, to) + 1; i < Math.max(from, to); i++) if (!br.seen(i)) out.push(i);
  return out;
}

// The middle unjudged index strictly between two indices, or null.
function middle(br: Bracket, from: number, to: number): number | null {
  const side = interior(br, from, to);
  return side.length ? side[Math.floor((side.length - 1) / 2)] : null;
}

// The next index to measure inside the bracket, or null when nothing there can be worth a restart. With both sides
// measured, go to the parabola's vertex; with one side failed or open, bisect towards it (the peak lies that way).
export function nextInBracket(br: Bracket): number | null {
  const fl = br.f(br.lo);
  const fb = br.f(br.best);
  const fh = br.f(br.hi);
  const hasL = br.lo !== br.best;
  const hasR = br.hi !== br.best;
  if (hasL && hasR && fl !== null && fb !== null && fh !== null) {
    const v = parabolaVertex(br.lo, fl, br.best, fb, br.hi, fh);
    if (v === null) return middle(br, br.lo, br.hi);
    // A vertex outside the bracket means the peak is at its measured edge: nothing inside is worth a restart.
    if (v <= br.lo || v >= br.hi) return null;
    const side = v < br.best ? interior(br, br.lo, br.best) : interior(br, br.best, br.hi);
    if (!side.length || Math.round(v) === br.best) return null;
    return side.reduce((x, y) => (Math.abs(y - v) < Math.abs(x - v) ? y : x));
  }
  if (hasR && (fh === null || !hasL)) return middle(br, br.best, br.hi);
  if (hasL) return middle(br, br.lo, br.best);
  return null;
}
