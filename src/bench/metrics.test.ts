import { describe, expect, it } from 'vitest';
import { buildSample, LevelStats, RequestTimeline, type RequestOutcome } from './metrics.js';

const outcome = (o: Partial<RequestOutcome> = {}): RequestOutcome => ({
  id: 'bench-1',
  ok: true,
  errorPhase: null,
  error: null,
  endMs: 1000,
  completionTokens: -1,
  promptTokens: -1,
  ...o,
});

// A timeline fed at injected times: first frame at 150 ms, then every 10 ms, with two frames in one read at 200.
function timeline(): RequestTimeline {
  const tl = new RequestTimeline(100, 2);
  for (const t of [150, 160, 170, 180, 190]) tl.onFrames(1, t);
  tl.onFrames(2, 200);
  return tl;
}

describe('RequestTimeline and buildSample', () => {
  it('records TTFT, every gap (zero for frames read together) and grows past its initial room', () => {
    const tl = timeline();
    expect(Array.from(tl.gaps.subarray(0, tl.nGaps))).toEqual([10, 10, 10, 10, 10, 0]);
    expect(tl.frames).toBe(7);
    expect(tl.shared).toBe(1);
    // A frame parsed from a later HTTP chunk of the same read carries the same stamp: shared as well.
    tl.onFrames(1, 200);
    expect(tl.shared).toBe(2);
    const s = buildSample(tl, outcome({ completionTokens: 13, promptTokens: 40, endMs: 210 }), 4, 50);
    expect(s).toMatchObject({ startMs: 50, ttftMs: 50, e2eMs: 110, outputTokens: 13, inputTokens: 40, concurrency: 4 });
    // (13 - 1) tokens over 50 ms between first and last token.
    expect(s.decodeTokensPerSec).toBeCloseTo(240, 9);
  });

  it('falls back to frame counts without usage, and has no E2E for a failed request', () => {
    const s = buildSample(timeline(), outcome({ ok: false, errorPhase: 'stall', error: 'x' }), 1, 0);
    expect(s).toMatchObject({ outputTokens: 7, inputTokens: null, e2eMs: null, ok: false, errorPhase: 'stall' });
  });

  it('has no decode rate for a single token', () => {
    const tl = new RequestTimeline(0);
    tl.onFrames(1, 30);
    expect(buildSample(tl, outcome({ completionTokens: 1 }), 1, 0)).toMatchObject({
      ttftMs: 30,
      decodeTokensPerSec: null,
    });
  });
});

describe('LevelStats', () => {
  it('feeds histograms from successful requests only and counts errors by phase', () => {
    const st = new LevelStats();
    const ok = timeline();
    st.add(ok, outcome({ completionTokens: 7 }), buildSample(ok, outcome({ completionTokens: 7 }), 1, 0));
    const bad = timeline();
    const failed = outcome({ ok: false, errorPhase: 'httpStatus', error: 'HTTP 500', endMs: 1500 });
    st.add(bad, failed, buildSample(bad, failed, 1, 0));
    expect({ ok: st.ok, failed: st.failed, lastError: st.lastError }).toEqual({
      ok: 1,
      failed: 1,
      lastError: 'HTTP 500',
    });
    expect(st.errors.httpStatus).toBe(1);
    expect(st.itl.count).toBe(6);
    expect(st.ttft.count).toBe(1);
    expect(st.usageMissing).toBe(0);
    expect({ frames: st.frames, sharedFrames: st.sharedFrames }).toEqual({ frames: 7, sharedFrames: 1 });
    expect(st.durationMs()).toBe(1400);
  });
});
