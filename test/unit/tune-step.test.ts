import { describe, expect, it } from 'vitest';
import { makeRun } from './tune-fakes.js';
import { decideNextStep, findDisqualified, reconcileTrials, SOAK_TOLERANCE } from '../../src/tune/step.js';
import { findBest } from '../../src/tune/best.js';
import { propose } from '../../src/search/index.js';
import type { TrialRecord } from '../../src/tune/types.js';

// A settled trial record.
function trial(
  index: number,
  kind: TrialRecord['kind'],
  steps: number,
  objective: number | null,
  status: TrialRecord['status'] = 'ok',
): TrialRecord {
  return {
    index,
    kind,
    config: { speculative_num_steps: steps },
    status,
    reason: '',
    objective,
    constraintsOk: status === 'ok' ? true : null,
    violations: [],
    runs: objective === null ? [] : [makeRun(objective)],
    verdict: null,
    prediction: null,
    capacity: null,
    restarts: 1,
    startedAt: 0,
    endedAt: 1,
  };
}

const BASE = {
  budget: { maxTrials: 5, maxHours: 1 },
  elapsedMs: 0,
  noiseMargin: 0.03,
  objective: { metric: 'decodeTokensPerSec.mean' as const, concurrency: 1, goal: 'maximize' as const },
};

describe('decideNextStep', () => {
  it('starts with the baseline', () => {
    expect(decideNextStep({ ...BASE, trials: [], propose: () => null }).kind).toBe('baseline');
  });
  it('asks the search, ignoring a discarded trial', () => {
    let seen: TrialRecord[] = [];
    const step = decideNextStep({
      ...BASE,
      trials: [trial(0, 'baseline', 1, 123), trial(1, 'search', 2, null, 'discarded')],
      propose: (h) => {
        seen = h;
        return { config: { speculative_num_steps: 2 }, reason: 'climb' };
      },
    });
    expect(step).toEqual({ kind: 'trial', config: { speculative_num_steps: 2 }, reason: 'climb', confirmProbe: false });
    expect(seen.map((t) => t.index)).toEqual([0]);
  });
  it('soaks the best when the search converges, then finishes on it', () => {
    const trials = [trial(0, 'baseline', 1, 123), trial(1, 'search', 4, 277), trial(2, 'search', 10, null, 'failed')];
    expect(decideNextStep({ ...BASE, trials, propose: () => null })).toEqual({
      kind: 'soak',
      config: { speculative_num_steps: 4 },
      of: 1,
    });
    const soaked = [...trials, trial(3, 'soak', 4, 277 * (1 - SOAK_TOLERANCE / 2))];
    const fin = decideNextStep({ ...BASE, trials: soaked, propose: () => null });
    expect(fin.kind === 'finish' && fin.best?.index).toBe(1);
  });
  it('a failed soak disqualifies the candidate and the next best is soaked', () => {
    const trials = [
      trial(0, 'baseline', 1, 123),
      trial(1, 'search', 4, 277),
      trial(2, 'search', 3, 234),
      trial(3, 'soak', 4, 200),
    ];
    expect(findDisqualified(trials, 'maximize').size).toBe(1);
    expect(decideNextStep({ ...BASE, trials, propose: () => null })).toEqual({
      kind: 'soak',
      config: { speculative_num_steps: 3 },
      of: 2,
    });
  });
  it('stops searching when the trial budget is spent (infeasible predictions are free)', () => {
    const trials = [
      trial(0, 'baseline', 1, 123),
      trial(1, 'search', 2, 186),
      trial(2, 'search', 10, null, 'infeasible'),
    ];
    const step = decideNextStep({
      ...BASE,
      budget: { maxTrials: 1, maxHours: 1 },
      trials,
      propose: () => ({ config: { speculative_num_steps: 3 }, reason: 'x' }),
    });
    expect(step.kind).toBe('soak');
  });
  it('stops at the hours budget', () => {
    const trials = [trial(0, 'baseline', 1, 123)];
    const step = decideNextStep({
      ...BASE,
      elapsedMs: 3_600_000,
      trials,
      propose: () => ({ config: { speculative_num_steps: 3 }, reason: 'x' }),
    });
    expect(step).toMatchObject({ kind: 'finish', why: 'budget spent' });
  });
});

describe("the winner follows the search's tie rule", () => {
  const finish = (trials: TrialRecord[]) =>
    decideNextStep({ ...BASE, trials: [...trials, trial(trials.length, 'soak', 4, 280)], propose: () => null });
  const soakOf = (trials: TrialRecord[]) => decideNextStep({ ...BASE, trials, propose: () => null });

  it('soaks and ends on the safer of two configs 0.5% apart (within noise), and says why', () => {
    const trials = [trial(0, 'baseline', 1, 123), trial(1, 'search', 4, 280), trial(2, 'search', 5, 281.4)];
    expect(soakOf(trials)).toEqual({ kind: 'soak', config: { speculative_num_steps: 4 }, of: 1 });
    const fin = finish(trials);
    expect(fin.kind === 'finish' && fin.best?.config).toEqual({ speculative_num_steps: 4 });
    expect(fin.kind === 'finish' && fin.winnerNote).toMatch(
      /^speculative_num_steps=5 measured \+0\.5% by median, within noise/,
    );
  });

  it('ends on the faster of two configs 10% apart', () => {
    const trials = [trial(0, 'baseline', 1, 123), trial(1, 'search', 4, 280), trial(2, 'search', 5, 308)];
    expect(soakOf(trials)).toEqual({ kind: 'soak', config: { speculative_num_steps: 5 }, of: 2 });
    const fin = decideNextStep({ ...BASE, trials: [...trials, trial(3, 'soak', 5, 308)], propose: () => null });
    expect(fin).toMatchObject({ kind: 'finish', best: { index: 2 }, winnerNote: null });
  });

  it('agrees with what propose() calls best on the same history', () => {
    const trials = [
      trial(0, 'baseline', 1, 123),
      trial(1, 'search', 2, 186),
      trial(2, 'search', 4, 277),
      trial(3, 'search', 5, 282),
      trial(4, 'search', 6, 279),
    ];
    const space = [{ key: 'speculative_num_steps', values: [1, 2, 4, 5, 6] }];
    const opts = {
      strategy: 'grid' as const,
      goal: 'maximize' as const,
      noiseMargin: 0.03,
      repeats: 1,
      soakRepeats: 0,
      baseline: { speculative_num_steps: 1 },
    };
    const done = propose(trials, space, { trials: 20 }, opts);
    expect(done).toMatchObject({ done: true, best: { speculative_num_steps: 4 } });
    expect(findBest(trials, { goal: 'maximize', noiseMargin: 0.03 })?.config).toEqual({ speculative_num_steps: 4 });
  });

  it('passes over a soak-disqualified winner to the next by the same rule', () => {
    const trials = [
      trial(0, 'baseline', 1, 123),
      trial(1, 'search', 4, 280),
      trial(2, 'search', 5, 281),
      trial(3, 'search', 6, 282),
      trial(4, 'soak', 4, 200),
    ];
    expect(soakOf(trials)).toEqual({ kind: 'soak', config: { speculative_num_steps: 5 }, of: 2 });
  });
});

describe('reconcileTrials', () => {
  it('discards the trial that was in flight', () => {
    const { trials, interrupted } = reconcileTrials([
      trial(0, 'baseline', 1, 123),
      trial(1, 'search', 2, null, 'running'),
    ]);
    expect(interrupted.map((t) => t.index)).toEqual([1]);
    expect(trials[1].status).toBe('discarded');
  });
});
