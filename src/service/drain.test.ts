import { describe, expect, it } from 'vitest';
import { adviseTimeoutStopSec, ASSUMED_ITL_MS, DRAIN_CHECK_MS, estimateDrainMs } from './drain.js';

// The observation: 16 requests of 3,000 tokens, an aggregate decode rate that made the old estimate say ~8 s
// (5 s + 16 × 256 tokens / 1365 tok/s), and a real drain of over 20 s.
const OBSERVED = { running: 16, queued: 0, genThroughput: 1365, maxRunning: 16 };

describe('estimateDrainMs', () => {
  it("16 requests × 3,000 tokens left: the longest request at one request's measured rate, not ~8 s", () => {
    const f = estimateDrainMs({ ...OBSERVED, remainingTokens: new Array(16).fill(3000) });
    // 1365 tok/s over 16 requests = 85.3 tok/s each; 3000 tokens take 35.2 s, plus the 5 s SIGTERM check.
    expect(f.perRequestTps).toBeCloseTo(85.31, 1);
    expect(f.drainMs).toBe(DRAIN_CHECK_MS + Math.ceil((3000 * 1000 * 16) / 1365));
    expect(f.drainMs).toBeGreaterThan(20_000);
    expect(f.tokensKnown).toBe(true);
    expect(f.rateMeasured).toBe(true);
    expect(f.basis).toBe(
      '16 requests, the longest 3000 tokens left (known), at 85.3 tok/s per request (measured: 1365 tok/s over 16)',
    );
    // The advice covers the real drain (> 20 s) with the stated margin: 40.2 s × 1.5 + 10 s.
    expect(adviseTimeoutStopSec(f.drainMs)).toBe(Math.ceil((f.drainMs * 1.5) / 1000) + 10);
    expect(adviseTimeoutStopSec(f.drainMs)).toBeGreaterThan(22);
  });

  it('unknown remaining tokens: the stated bound per request, said to be assumed', () => {
    const f = estimateDrainMs({ ...OBSERVED, assumedOutputTokens: 3000 });
    expect(f.drainMs).toBe(DRAIN_CHECK_MS + Math.ceil((3000 * 1000 * 16) / 1365));
    expect(f.tokensKnown).toBe(false);
    expect(f.basis).toContain('up to 3000 tokens left each (assumed');
  });

  it('the longest request sets the time, and all tokens at the aggregate rate are a floor', () => {
    const f = estimateDrainMs({
      running: 4,
      queued: 0,
      genThroughput: 400,
      maxRunning: 16,
      remainingTokens: [10, 10, 10, 2000],
    });
    expect(f.drainMs).toBe(DRAIN_CHECK_MS + 20_000); // 2000 tokens at 100 tok/s
    // Three requests known, two slots counted running: 1099 tokens at 200 tok/s (5.5 s) outlast 500 at 100 (5 s).
    const g = estimateDrainMs({
      running: 2,
      queued: 0,
      genThroughput: 200,
      maxRunning: 2,
      remainingTokens: [500, 500, 99],
    });
    expect(g.drainMs).toBe(DRAIN_CHECK_MS + 5495);
  });

  it('queued requests wait for a slot: one more batch per max_running_requests', () => {
    const f = estimateDrainMs({ running: 8, queued: 8, genThroughput: 800, maxRunning: 8, assumedOutputTokens: 1000 });
    expect(f.waves).toBe(2);
    expect(f.drainMs).toBe(DRAIN_CHECK_MS + 20_000);
    expect(f.basis).toContain('2 batches of 8');
  });

  it('no measured rate: the conservative ITL, said to be assumed; idle: zero', () => {
    const f = estimateDrainMs({
      running: 1,
      queued: 0,
      genThroughput: null,
      maxRunning: null,
      assumedOutputTokens: 100,
    });
    expect(f.drainMs).toBe(DRAIN_CHECK_MS + 100 * ASSUMED_ITL_MS);
    expect(f.basis).toContain(`assumed ${ASSUMED_ITL_MS} ms per token`);
    expect(estimateDrainMs({ running: 0, queued: 0, genThroughput: 0, maxRunning: 16 }).drainMs).toBe(0);
  });
});
