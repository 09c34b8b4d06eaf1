import { describe, expect, it } from 'vitest';
import { sumActiveMs } from './active-time.js';
import type { TrialRecord } from './types.js';

const HOUR = 3_600_000;
// A trial that ran from `start` to `end` (ms).
const trial = (start: number, end: number | null, status: TrialRecord['status'] = 'ok'): TrialRecord => ({
  index: 0,
  kind: 'search',
  config: {},
  status,
  reason: '',
  objective: 1,
  constraintsOk: true,
  violations: [],
  runs: [],
  verdict: null,
  prediction: null,
  capacity: null,
  restarts: 1,
  startedAt: start,
  endedAt: end,
});

describe('sumActiveMs', () => {
  it('sums the run spans and leaves out the gaps between them (a night of interruption costs nothing)', () => {
    expect(
      sumActiveMs([
        { startedAt: 0, lastActiveAt: HOUR },
        { startedAt: 11 * HOUR, lastActiveAt: 11.5 * HOUR },
      ]),
    ).toBe(1.5 * HOUR);
    expect(sumActiveMs([])).toBe(0);
  });

  it('counts the trials of runs from before spans were recorded by their own durations, never an interrupted one', () => {
    const legacy = [
      trial(0, 10 * 60_000),
      trial(10 * 60_000, 10 * HOUR, 'discarded'),
      trial(10 * HOUR, 10 * HOUR + 5 * 60_000),
    ];
    expect(sumActiveMs([], legacy)).toBe(15 * 60_000);
    const later = trial(11 * HOUR, 11 * HOUR + 60_000);
    expect(sumActiveMs([{ startedAt: 11 * HOUR, lastActiveAt: 12 * HOUR }], [...legacy, later])).toBe(
      15 * 60_000 + HOUR,
    );
  });
});
