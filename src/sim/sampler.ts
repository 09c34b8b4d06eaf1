// Deterministic randomness for the server: accepted-draft counts and step-time noise (pure, seeded).

/** Golden-ratio increment: consecutive draws cover [0,1) evenly, so short runs already hit the model's mean. */
const GOLDEN = 0.6180339887498949;

// A small seeded PRNG (mulberry32) for noise that must not correlate with the acceptance draws.
export function createRng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Next point of a request's low-discrepancy sequence.
export function nextUniform(u: number): number {
  return (u + GOLDEN) % 1;
}

// Number of accepted draft tokens for one verify step, by inverse CDF over the acceptance curve P(first k accepted).
export function drawAccepted(curve: number[], u: number): number {
  let k = 0;
  while (k < curve.length && u < curve[k]) k++;
  return k;
}

// Multiplicative step-time noise in [1 - jitter, 1 + jitter].
export function drawJitter(rng: () => number, jitter: number): number {
  return 1 + (rng() * 2 - 1) * jitter;
}
