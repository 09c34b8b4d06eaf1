import { describe, expect, it } from 'vitest';
import { formatLevelLine, formatProgress } from './render.js';
import type { BenchRun } from './types.js';

const summary = { mean: 1, p50: 1, p90: 2, p99: 3 };
const RUN: BenchRun = {
  concurrency: 16,
  rate: null,
  requests: { ok: 9, failed: 1 },
  durationMs: 1000,
  outputTokensPerSec: 1234.56,
  requestsPerSec: 9,
  ttftMs: summary,
  itlMs: summary,
  e2eMs: summary,
  decodeTokensPerSec: summary,
  acceptLength: null,
  usageFromServer: false,
  errors: { connect: 0, httpStatus: 1, firstTokenTimeout: 0, stall: 0, endedEarly: 0, other: 0 },
  engine: { before: null, after: null },
  stoppedEarly: null,
};

describe('render', () => {
  it('puts a whole level on one line, naming errors and chunk-counted tokens', () => {
    const line = formatLevelLine(RUN);
    expect(line.split('\n')).toHaveLength(1);
    expect(line).toMatch(/^concurrency 16: 9 ok, 1 failed, 1234\.6 out tok\/s/);
    expect(line).toContain('errors httpStatus 1');
    expect(line).toContain('accept -');
    expect(line).toContain('token counts from chunks');
  });

  it('draws a bounded progress bar, or a counter when the total is unknown', () => {
    expect(
      formatProgress({ type: 'bench:progress', ts: 0, concurrency: 4, done: 5, total: 10, outputTokensPerSec: 99.6 }),
    ).toBe(`c=4 [${'#'.repeat(12)}${'.'.repeat(12)}] 5/10  100 tok/s`);
    expect(
      formatProgress({ type: 'bench:progress', ts: 0, concurrency: 4, done: 50, total: 10, outputTokensPerSec: null }),
    ).toContain(`[${'#'.repeat(24)}]`);
    expect(
      formatProgress({ type: 'bench:progress', ts: 0, concurrency: 4, done: 5, total: null, outputTokensPerSec: null }),
    ).toBe('c=4 5 requests');
  });
});
