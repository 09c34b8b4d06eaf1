import { describe, expect, it } from 'vitest';
import type { BenchRun } from '../bench/types.js';
import { describeBestPerConcurrency, findBestPerConcurrency } from './per-concurrency.js';
import type { TrialRecord } from './types.js';

const s = (v: number) => ({ mean: v, p50: v, p90: v, p99: v });
const run = (concurrency: number, out: number): BenchRun => ({
  concurrency,
  rate: null,
  requests: { ok: 4, failed: 0 },
  durationMs: 1000,
  outputTokensPerSec: out,
  requestsPerSec: 1,
  ttftMs: s(100),
  itlMs: s(5),
  e2eMs: s(900),
  decodeTokensPerSec: s(out / concurrency),
  acceptLength: null,
  usageFromServer: true,
  errors: { connect: 0, httpStatus: 0, firstTokenTimeout: 0, stall: 0, endedEarly: 0, other: 0 },
  engine: { before: null, after: null },
  stoppedEarly: null,
});
const trial = (
  index: number,
  n: number,
  c1: number,
  c16: number,
  kind: TrialRecord['kind'] = 'search',
  status: TrialRecord['status'] = 'ok',
): TrialRecord => ({
  index,
  kind,
  config: { spec_draft_n_max: n },
  status,
  reason: '',
  objective: c1,
  constraintsOk: true,
  violations: [],
  runs: status === 'ok' ? [run(1, c1), run(16, c16)] : [],
  verdict: null,
  prediction: null,
  capacity: null,
  restarts: 1,
  startedAt: 0,
  endedAt: 1,
});

describe('findBestPerConcurrency', () => {
  it('names the best config at each level: long drafts for one user, short ones under load', () => {
    const trials = [
      trial(0, 4, 320, 540, 'baseline'),
      trial(1, 16, 390, 500),
      trial(2, 16, 396, 510, 'soak'),
      trial(3, 1, 200, 560),
      trial(4, 8, 0, 0, 'search', 'failed'),
    ];
    const best = findBestPerConcurrency(trials);
    expect(best.map((b) => [b.concurrency, b.config.spec_draft_n_max])).toEqual([
      [1, 16],
      [16, 1],
    ]);
    expect(best[0].outputTokensPerSec).toBe(393);
    expect(best[0].vsBaseline).toBeCloseTo(393 / 320 - 1, 9);
    expect(best[1].baselineOutputTokensPerSec).toBe(540);
    expect(describeBestPerConcurrency(best)).toBe(
      'best by load (output tok/s): c=1 spec_draft_n_max=16 393.0 (+22.8% vs baseline); c=16 spec_draft_n_max=1 560.0 (+3.7% vs baseline)',
    );
  });

  it('is empty when nothing was measured', () => {
    expect(findBestPerConcurrency([trial(0, 4, 0, 0, 'baseline', 'failed')])).toEqual([]);
    expect(describeBestPerConcurrency([])).toBe('');
  });
});
