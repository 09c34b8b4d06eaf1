// Deterministic randomness for the server: accepted-draft counts and step-time noise (pure, seeded).

/** Golden-ratio increment: consecutive draws cover [0,1) evenly, so short runs already hit the model's mean. */
const GOLDEN = 0.6180339887498949;

// Re-exported from the shared PRNG so existing callers keep their name.
export { createRandom as createRng } from '../random.js';

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
