// Batches from the real search: distinct candidates, baseline first, real results replace the guesses.
import { describe, expect, it } from 'vitest';
import { propose, type SearchOptions } from '../search/index.js';
import type { Dimension } from '../config/types.js';
import type { TrialRecord } from '../tune/types.js';
import { proposeBatch, type ProposeFn } from './batch.js';

const SPACE: Dimension[] = [{ key: 'speculative_num_steps', values: [1, 2, 3, 4, 5, 6] } as Dimension];
const opts = (strategy: SearchOptions['strategy']): SearchOptions => ({
  strategy,
  goal: 'maximize',
  noiseMargin: 0.02,
  repeats: 1,
  soakRepeats: 0,
  baseline: { speculative_num_steps: 1 },
});
const searchOf =
  (strategy: SearchOptions['strategy']): ProposeFn =>
  (h) => {
    const p = propose(h, SPACE, { trials: 7 }, opts(strategy));
    return p.done ? null : { config: p.params, reason: p.reason, confirmProbe: p.confirmProbe };
  };
const measured = (
  index: number,
  steps: number,
  objective: number,
  kind: TrialRecord['kind'] = 'search',
): TrialRecord => ({
  index,
  kind,
  config: { speculative_num_steps: steps },
  status: 'ok',
  reason: '',
  objective,
  constraintsOk: true,
  violations: [],
  runs: [],
  verdict: null,
  prediction: null,
  capacity: null,
  restarts: 1,
  startedAt: 0,
  endedAt: 0,
});

describe('proposeBatch', () => {
  it('puts the baseline first and adds distinct candidates of the grid', () => {
    const b = proposeBatch(searchOf('grid'), [], 3, 'maximize', {
      config: { speculative_num_steps: 1 },
      reason: 'baseline',
      confirmProbe: false,
    });
    expect(b.map((x) => x.config.speculative_num_steps)).toEqual([1, 2, 3]);
  });
  it('lets an adaptive climb run ahead, and re-plans from real results', () => {
    const first = proposeBatch(searchOf('adaptive'), [], 3, 'maximize', {
      config: { speculative_num_steps: 1 },
      reason: 'baseline',
      confirmProbe: false,
    });
    const steps = first.map((x) => Number(x.config.speculative_num_steps));
    expect(new Set(steps).size).toBe(3);
    expect(steps[0]).toBe(1);
    // Reality replaces the guesses: the next batch goes on from the measured values, never re-running a measured config.
    const history = [measured(0, 1, 100, 'baseline'), measured(1, steps[1], 150), measured(2, steps[2], 200)];
    const next = proposeBatch(searchOf('adaptive'), history, 3, 'maximize');
    expect(next.length).toBeGreaterThan(0);
    for (const x of next)
      expect(steps.includes(Number(x.config.speculative_num_steps)) && !/repeat|refine/.test(x.reason)).toBe(false);
  });
  it('stops at a size of 1 (sequential) and when the search is done', () => {
    expect(proposeBatch(searchOf('grid'), [measured(0, 1, 100, 'baseline')], 1, 'maximize')).toHaveLength(1);
    const all = [1, 2, 3, 4, 5, 6].map((s, i) => measured(i, s, 100 + s, i === 0 ? 'baseline' : 'search'));
    expect(proposeBatch(searchOf('grid'), all, 3, 'maximize')).toEqual([]);
  });
});
