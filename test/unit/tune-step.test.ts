import { describe, expect, it } from 'vitest';
import { makeRun } from './tune-fakes.js';
import { decideNextStep, findDisqualified, reconcileTrials, SOAK_TOLERANCE } from '../../src/tune/step.js';
import type { TrialRecord } from '../../src/tune/types.js';

// A settled trial record.
function trial(index: number, kind: TrialRecord['kind'], steps: number, objective: number | null, status: TrialRecord['status'] = 'ok'): TrialRecord {
  return {
    index, kind, config: { speculative_num_steps: steps }, status, reason: '', objective, constraintsOk: status === 'ok' ? true : null,
    violations: [], runs: objective === null ? [] : [makeRun(objective)], verdict: null, prediction: null, capacity: null,
    restarts: 1, startedAt: 0, endedAt: 1,
  };
}

const BASE = { budget: { maxTrials: 5, maxHours: 1 }, elapsedMs: 0, objective: { metric: 'decodeTokensPerSec.mean' as const, concurrency: 1, goal: 'maximize' as const } };

describe('decideNextStep', () => {
  it('starts with the baseline', () => {
    expect(decideNextStep({ ...BASE, trials: [], propose: () => null }).kind).toBe('baseline');
  });
  it('asks the search, ignoring a discarded trial', () => {
    let seen: TrialRecord[] = [];
    const step = decideNextStep({ ...BASE, trials: [trial(0, 'baseline', 1, 123), trial(1, 'search', 2, null, 'discarded')], propose: (h) => { seen = h; return { config: { speculative_num_steps: 2 }, reason: 'climb' }; } });
    expect(step).toEqual({ kind: 'trial', config: { speculative_num_steps: 2 }, reason: 'climb', confirmProbe: false });
    expect(seen.map((t) => t.index)).toEqual([0]);
  });
  it('soaks the best when the search converges, then finishes on it', () => {
    const trials = [trial(0, 'baseline', 1, 123), trial(1, 'search', 4, 277), trial(2, 'search', 10, null, 'failed')];
    expect(decideNextStep({ ...BASE, trials, propose: () => null })).toEqual({ kind: 'soak', config: { speculative_num_steps: 4 }, of: 1 });
    const soaked = [...trials, trial(3, 'soak', 4, 277 * (1 - SOAK_TOLERANCE / 2))];
    const fin = decideNextStep({ ...BASE, trials: soaked, propose: () => null });
    expect(fin.kind === 'finish' && fin.best?.index).toBe(1);
  });
  it('a failed soak disqualifies the candidate and the next best is soaked', () => {
    const trials = [trial(0, 'baseline', 1, 123), trial(1, 'search', 4, 277), trial(2, 'search', 3, 234), trial(3, 'soak', 4, 200)];
    expect(findDisqualified(trials, 'maximize').size).toBe(1);
    expect(decideNextStep({ ...BASE, trials, propose: () => null })).toEqual({ kind: 'soak', config: { speculative_num_steps: 3 }, of: 2 });
  });
  it('stops searching when the trial budget is spent (infeasible predictions are free)', () => {
    const trials = [trial(0, 'baseline', 1, 123), trial(1, 'search', 2, 186), trial(2, 'search', 10, null, 'infeasible')];
    const step = decideNextStep({ ...BASE, budget: { maxTrials: 1, maxHours: 1 }, trials, propose: () => ({ config: { speculative_num_steps: 3 }, reason: 'x' }) });
    expect(step.kind).toBe('soak');
  });
  it('stops at the hours budget', () => {
    const trials = [trial(0, 'baseline', 1, 123)];
    const step = decideNextStep({ ...BASE, elapsedMs: 3_600_000, trials, propose: () => ({ config: { speculative_num_steps: 3 }, reason: 'x' }) });
    expect(step).toMatchObject({ kind: 'finish', why: 'budget spent' });
  });
});

describe('reconcileTrials', () => {
  it('discards the trial that was in flight', () => {
    const { trials, interrupted } = reconcileTrials([trial(0, 'baseline', 1, 123), trial(1, 'search', 2, null, 'running')]);
    expect(interrupted.map((t) => t.index)).toEqual([1]);
    expect(trials[1].status).toBe('discarded');
  });
});
