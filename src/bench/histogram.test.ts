import { describe, expect, it } from 'vitest';
import { LogHistogram } from './histogram.js';
import { createRandom } from './prompts.js';

// Exact nearest-rank quantile of a sorted array, the reference the histogram must match within 0.1%.
function exactQuantile(sorted: number[], q: number): number {
  return sorted[Math.max(1, Math.ceil(q * sorted.length)) - 1];
}

describe('LogHistogram', () => {
  it('is within 0.1% of the exact percentiles over six orders of magnitude', () => {
    const rand = createRandom(7);
    const h = new LogHistogram();
    const values: number[] = [];
    for (let i = 0; i < 20_000; i++) {
      const v = Math.exp(rand() * 14 - 7);
      values.push(v);
      h.record(v);
    }
    values.sort((a, b) => a - b);
    for (const q of [0.01, 0.5, 0.9, 0.99, 0.999]) {
      const want = exactQuantile(values, q);
      expect(Math.abs(h.quantile(q)! - want) / want, `q=${q}`).toBeLessThanOrEqual(0.001);
    }
    expect(h.summarize().mean).toBeCloseTo(values.reduce((a, b) => a + b, 0) / values.length, 9);
  });

  it('reports exact min/max, handles zeros and ignores invalid values', () => {
    const h = new LogHistogram();
    for (const v of [0, 0, 10, -1, NaN, Infinity, 20]) h.record(v);
    expect(h.count).toBe(4);
    expect(h.quantile(0.5)).toBe(0);
    expect(h.quantile(1)).toBe(20);
    expect(h.summarize()).toMatchObject({ min: 0, max: 20, mean: 7.5 });
  });

  it('is empty-safe and merges', () => {
    const a = new LogHistogram();
    expect(a.summarize()).toMatchObject({ count: 0, mean: null, p99: null });
    const b = new LogHistogram();
    b.recordAll(new Float64Array([1, 2, 3, 4]), 4);
    a.merge(b);
    expect(a.count).toBe(4);
    expect(a.quantile(0.5)).toBeCloseTo(2, 1);
  });
});
