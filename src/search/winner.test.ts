import { describe, expect, it } from 'vitest';
import { propose } from './strategy.js';
import type { HistoryEntry, SearchOptions, SearchSpace } from './types.js';
import { findWinner } from './winner.js';

const steps: SearchSpace = [{ key: 'speculative_num_steps', values: [1, 2, 3, 4, 5, 6, 7, 8] }];
const rule = { goal: 'maximize' as const, noiseMargin: 0.03, baseline: { speculative_num_steps: 1 } };
const opts = (o: Partial<SearchOptions> = {}): SearchOptions => ({
  strategy: 'grid',
  repeats: 1,
  soakRepeats: 0,
  ...rule,
  ...o,
});
const ok = (s: number, objective: number, kind = 'search'): HistoryEntry => ({
  config: { speculative_num_steps: s },
  status: 'ok',
  objective,
  constraintsOk: true,
  kind,
});

describe('findWinner', () => {
  it('gives a tie within the noise margin to the config nearer the baseline, and says why', () => {
    const w = findWinner([ok(1, 100, 'baseline'), ok(4, 280), ok(5, 281.4)], rule);
    expect(w?.params).toEqual({ speculative_num_steps: 4 });
    expect(w?.top).toEqual({ speculative_num_steps: 5 });
    expect(w?.gain).toBeCloseTo(-0.005, 3);
    expect(w?.why).toBe(
      'speculative_num_steps=5 measured +0.5% by median, within noise (margin 3.0%): kept the safer speculative_num_steps=4, nearer the baseline',
    );
    expect(w?.why).not.toMatch(/-\d/);
  });

  it('lets the faster config win when it beats the margin', () => {
    const w = findWinner([ok(1, 100, 'baseline'), ok(4, 280), ok(5, 308)], rule);
    expect(w).toMatchObject({ params: { speculative_num_steps: 5 }, gain: 0, why: null });
  });

  it('prefers fewer changed settings before fewer steps, and honours minimise goals', () => {
    const two = (a: number, b: number, objective: number): HistoryEntry => ({
      config: { a, b },
      status: 'ok',
      objective,
      constraintsOk: true,
    });
    const w = findWinner([two(1, 1, 100), two(2, 2, 99), two(5, 1, 99.5)], {
      goal: 'minimize',
      noiseMargin: 0.03,
      baseline: { a: 1, b: 1 },
    });
    expect(w?.params).toEqual({ a: 1, b: 1 });
    expect(
      findWinner([two(1, 1, 100), two(2, 2, 90)], { goal: 'minimize', noiseMargin: 0.03, baseline: { a: 1, b: 1 } })
        ?.params,
    ).toEqual({ a: 2, b: 2 });
  });

  it('ignores soaks, failed and excluded configs', () => {
    const h = [
      ok(1, 100, 'baseline'),
      ok(4, 280),
      ok(6, 400, 'soak'),
      { config: { speculative_num_steps: 5 }, status: 'failed', objective: null },
      ok(5, 300),
    ];
    expect(findWinner(h, rule)?.params).toEqual({ speculative_num_steps: 4 });
    expect(findWinner(h, rule, new Set([JSON.stringify([['speculative_num_steps', 4]])]))?.params).toEqual({
      speculative_num_steps: 1,
    });
  });

  it('is the rule propose() answers with when it is done', () => {
    const h = steps[0].values.map((s) => ok(s as number, s === 1 ? 100 : 280 + (s as number)));
    const done = propose(h, steps, { trials: 20 }, opts());
    expect(done).toMatchObject({ done: true, best: { speculative_num_steps: 2 } });
    expect(findWinner(h, rule)?.params).toEqual({ speculative_num_steps: 2 });
  });
});
