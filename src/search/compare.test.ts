import { describe, expect, it } from 'vitest';
import { candidateTimeoutMs, compare, median, needsRepeat } from './compare.js';

describe('compare', () => {
  it("calls the seed's 277 → 282 (+1.8%) a tie at a 3% margin, and 234 → 277 a win", () => {
    expect(compare([277], [282], 0.03)).toMatchObject({ winner: 'tie', nearTie: true });
    expect(compare([277], [282], 0.03).gain).toBeCloseTo(0.018, 3);
    expect(compare([234], [277], 0.03).winner).toBe('b');
    expect(compare([277], [234], 0.03).winner).toBe('a');
  });

  it('decides by the median, so one outlier run does not win', () => {
    expect(compare([100, 101, 99], [100, 140, 100], 0.03).winner).toBe('tie');
    expect(median([3, 1, 2])).toBe(2);
    expect(median([1, 2, 3, 10])).toBe(2.5);
  });

  it('honours the goal for latencies', () => {
    expect(compare([2000], [1500], 0.03, 'minimize').winner).toBe('b');
    expect(compare([2000], [1500], 0.03, 'maximize').winner).toBe('a');
  });

  it('asks for a repeat only on near-ties with repeats left', () => {
    const tie = compare([277], [282], 0.03);
    expect(needsRepeat(tie, 1, 2)).toBe(true);
    expect(needsRepeat(tie, 2, 2)).toBe(false);
    expect(needsRepeat(compare([100], [150], 0.03), 1, 3)).toBe(false);
    expect(candidateTimeoutMs(60_000)).toBe(180_000);
  });
});
