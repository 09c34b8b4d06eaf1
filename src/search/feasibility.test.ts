import { describe, expect, it } from 'vitest';
import { checkPrediction, draftTokensOf, fitLine, graphLoadOf, predictFeasibility } from './feasibility.js';
import type { HistoryEntry } from './types.js';

// Capacity lines of the seed's profile (2 × GB10, cuda_graph_max_bs 512): tokens fall by ~124k per extra draft token.
const ok = (steps: number, tokens: number, mrr: number): HistoryEntry => ({
  config: { speculative_num_steps: steps },
  status: 'ok',
  objective: 1,
  capacity: { maxTotalNumTokens: tokens, maxRunningRequests: mrr },
});
const history = [ok(1, 936297, 25), ok(2, 812404, 21), ok(4, 564617, 14)];
const defaults = { cuda_graph_max_bs: 512 };
const space = [{ key: 'cuda_graph_max_bs', values: [64, 128, 256, 512] }];

describe('predictFeasibility', () => {
  it('derives draft tokens and CUDA-graph load from the settings', () => {
    expect(draftTokensOf({ speculative_num_steps: 10 })).toBe(11);
    expect(
      draftTokensOf({ speculative_num_steps: 3, speculative_eagle_topk: 4, speculative_num_draft_tokens: 8 }),
    ).toBe(8);
    expect(draftTokensOf({ num_speculative_tokens: 3 })).toBe(4);
    expect(graphLoadOf({ speculative_num_steps: 10, cuda_graph_max_bs: 512 })).toBe(5632);
    expect(
      fitLine([
        { x: 1, y: 3 },
        { x: 2, y: 5 },
      ]),
    ).toEqual({ a: 1, b: 2 });
    expect(fitLine([{ x: 1, y: 3 }])).toBeNull();
  });

  it('predicts the init OOM of steps=10 (and 9) and suggests a lower cuda_graph_max_bs', () => {
    const p10 = predictFeasibility(history, { speculative_num_steps: 10 }, { defaults, space })!;
    expect(p10.feasible).toBe(false);
    expect(p10.reason).toMatch(/KV pool would be empty/);
    expect(p10.change).toEqual({ cuda_graph_max_bs: 256 });
    expect(p10.suggestion).toBe('cuda_graph_max_bs=256');
    expect(predictFeasibility(history, { speculative_num_steps: 9 }, { defaults, space })!.feasible).toBe(false);
    const fits = predictFeasibility(
      history,
      { speculative_num_steps: 10, cuda_graph_max_bs: 256 },
      { defaults, space },
    )!;
    expect(fits.feasible).toBe(true);
  });

  it('suggests fewer steps when cuda_graph_max_bs is not among the known settings', () => {
    const p10 = predictFeasibility(history, { speculative_num_steps: 10 })!;
    expect(p10).toMatchObject({
      feasible: false,
      change: { speculative_num_steps: 8 },
      suggestion: 'speculative_num_steps=8',
    });
  });

  it('calls steps=8 feasible but flags its tiny max_running_requests against the constraint concurrency', () => {
    const p8 = predictFeasibility(history, { speculative_num_steps: 8 }, { defaults, needRunningRequests: 16 })!;
    expect(p8.feasible).toBe(true);
    expect(p8.predicted.maxTotalNumTokens).toBeGreaterThan(0);
    expect(p8.predicted.maxRunningRequests).toBeLessThan(4);
    expect(p8.reason).toMatch(/< 16 needed by the constraints/);
  });

  it('learns from memory failures and from larger configs that started', () => {
    const failed: HistoryEntry = {
      config: { speculative_num_steps: 6 },
      status: 'failed',
      objective: null,
      verdict: { class: 'crash_loop', cause: 'kv_cache_oom' },
    };
    expect(predictFeasibility([ok(1, 900000, 20), failed], { speculative_num_steps: 7 }, { defaults })).toMatchObject({
      feasible: false,
      confidence: 'high',
    });
    const portInUse: HistoryEntry = { ...failed, verdict: { class: 'port_in_use' } };
    expect(predictFeasibility([ok(1, 900000, 20), portInUse], { speculative_num_steps: 7 }, { defaults })).toBeNull();
    expect(predictFeasibility([ok(5, 500000, 10)], { speculative_num_steps: 3 }, { defaults })).toMatchObject({
      feasible: true,
      confidence: 'high',
    });
  });

  it('has no opinion without two capacity lines of the same family', () => {
    expect(predictFeasibility([ok(1, 936297, 25)], { speculative_num_steps: 10 }, { defaults })).toBeNull();
    const other = { ...ok(2, 812404, 21), config: { speculative_num_steps: 2, mem_fraction_static: 0.7 } };
    expect(predictFeasibility([ok(1, 936297, 25), other], { speculative_num_steps: 10 }, { defaults })).toBeNull();
  });
});

describe('checkPrediction', () => {
  const fits = {
    feasible: true,
    reason: 'r',
    suggestion: null,
    change: null,
    confidence: 'high' as const,
    predicted: { maxTotalNumTokens: 1, maxRunningRequests: 1 },
  };
  it('says when a prediction was wrong', () => {
    expect(checkPrediction(fits, { status: 'failed', verdict: { class: 'kv_cache_oom' } })?.wrong).toBe(true);
    expect(checkPrediction(fits, { status: 'failed', verdict: { class: 'stop_timeout' } })?.wrong).toBe(false);
    expect(checkPrediction({ ...fits, feasible: false }, { status: 'ok' })?.wrong).toBe(true);
    expect(checkPrediction(fits, { status: 'ok' })).toEqual({ wrong: false, note: 'predicted to fit; it did' });
    expect(checkPrediction(null, { status: 'ok' })).toBeNull();
  });
});
