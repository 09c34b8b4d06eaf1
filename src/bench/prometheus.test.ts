import { describe, expect, it } from 'vitest';
import { computeAcceptance, computeAcceptLength, parsePrometheus, summarizeEngineView } from './prometheus.js';

const SGLANG = `# HELP sglang:num_running_reqs The number of running requests.
# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{model_name="m",tp_rank="0"} 17
sglang:num_running_reqs{model_name="m",tp_rank="1"} 4
sglang:token_usage{model_name="m",tp_rank="0"} 0.5
sglang:token_usage{model_name="m",tp_rank="1"} 0.7
sglang:spec_accept_length{model_name="m",tp_rank="0"} 2.8
sglang:time_to_first_token_seconds_bucket{le="+Inf",model_name="m"} 12
weird{label="a \\"quoted\\" \\\\ value"} NaN
`;

const vllm = (drafts: number, accepted: number): string => `vllm:num_requests_running{engine="0",model_name="m"} 3
vllm:kv_cache_usage_perc{engine="0",model_name="m"} 0.25
vllm:spec_decode_num_drafts_total{engine="0",model_name="m"} ${drafts}
vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="m"} ${accepted}
`;

describe('parsePrometheus', () => {
  it('reads names, labels (with escapes) and special values, skipping comments', () => {
    const s = parsePrometheus(SGLANG);
    expect(s).toHaveLength(7);
    expect(s[0]).toEqual({ name: 'sglang:num_running_reqs', labels: { model_name: 'm', tp_rank: '0' }, value: 17 });
    expect(s.find((x) => x.name.endsWith('_bucket'))?.labels.le).toBe('+Inf');
    expect(s[6].labels.label).toBe('a "quoted" \\ value');
    expect(Number.isNaN(s[6].value)).toBe(true);
  });
});

describe('summarizeEngineView', () => {
  it('sums running requests over ranks and averages KV usage (SGLang)', () => {
    const v = summarizeEngineView(parsePrometheus(SGLANG), {
      internal_states: [{ avg_spec_accept_length: 2.4, max_running_requests: 21 }],
    });
    expect(v).toMatchObject({
      runningRequests: 21,
      kvUsage: 0.6,
      specAcceptLength: 2.8,
      serverAvgAcceptLength: 2.4,
      maxRunningRequests: 21,
    });
  });

  it('maps vLLM and llama.cpp names onto the same keys, null when absent', () => {
    expect(summarizeEngineView(parsePrometheus(vllm(10, 15)), null)).toMatchObject({
      runningRequests: 3,
      kvUsage: 0.25,
      specDraftsTotal: 10,
      specAcceptLength: null,
    });
    expect(
      summarizeEngineView(parsePrometheus('llamacpp:requests_processing 2\nllamacpp:requests_deferred 1\n'), null),
    ).toMatchObject({ runningRequests: 2, queuedRequests: 1, kvUsage: null });
  });
});

describe('computeAcceptLength', () => {
  it('uses the vLLM counter deltas of the level: 1 + accepted / drafts', () => {
    const before = summarizeEngineView(parsePrometheus(vllm(100, 150)), null);
    const after = summarizeEngineView(parsePrometheus(vllm(300, 550)), null);
    expect(computeAcceptLength(before, after)).toBe(3);
  });

  it('prefers the SGLang gauge read mid-level, then after, then the lifetime average', () => {
    const view = (gauge: number | null, lifetime: number | null) => ({
      ...summarizeEngineView(null, null),
      specAcceptLength: gauge,
      serverAvgAcceptLength: lifetime,
    });
    expect(computeAcceptLength(null, view(0, 2.2), view(3.1, null))).toBe(3.1);
    expect(computeAcceptLength(null, view(2.9, 2.2))).toBe(2.9);
    expect(computeAcceptLength(null, view(0, 2.2))).toBe(2.2);
    expect(computeAcceptLength(null, view(null, null))).toBeNull();
    expect(computeAcceptLength(null, null)).toBeNull();
  });
});

// llama-server --metrics counters (tools/server/server-task.cpp server_task_result_metrics::to_metrics), as exposed.
const llamacpp = (draftTokens: number, accepted: number, drafts: number) =>
  [
    '# HELP llamacpp:spec_decode_num_draft_tokens_total Speculative: Total draft tokens generated',
    '# TYPE llamacpp:spec_decode_num_draft_tokens_total counter',
    `llamacpp:spec_decode_num_draft_tokens_total ${draftTokens}`,
    '# HELP llamacpp:spec_decode_num_accepted_tokens_total Speculative: Total draft tokens accepted by the target model',
    '# TYPE llamacpp:spec_decode_num_accepted_tokens_total counter',
    `llamacpp:spec_decode_num_accepted_tokens_total ${accepted}`,
    '# HELP llamacpp:spec_decode_num_drafts_total Speculative: Total speculative decoding verification steps',
    '# TYPE llamacpp:spec_decode_num_drafts_total counter',
    `llamacpp:spec_decode_num_drafts_total ${drafts}`,
    '',
  ].join('\n');

describe('computeAcceptance (llama-server)', () => {
  it('reads the --metrics counter deltas: 1 + accepted / verification steps, rate = accepted / drafted', () => {
    const before = summarizeEngineView(parsePrometheus(llamacpp(1000, 800, 250)), null);
    const after = summarizeEngineView(parsePrometheus(llamacpp(3000, 2400, 750)), null);
    expect(computeAcceptance(before, after, null, null)).toEqual({
      acceptLength: 1 + 1600 / 500,
      acceptRate: 0.8,
      source: 'metrics',
    });
  });

  it("without --metrics, falls back to the streams' own timings: (generated - 1) / (generated - 1 - accepted) per request", () => {
    // Two requests of 128 tokens; 96 draft tokens accepted of 120 drafted in all.
    const a = computeAcceptance(null, null, null, { requests: 2, drafted: 120, accepted: 96, predicted: 256 });
    expect(a.source).toBe('stream');
    expect(a.acceptRate).toBeCloseTo(0.8, 9);
    expect(a.acceptLength).toBeCloseTo(254 / 158, 9);
  });

  it('is null without speculation (no counters, no draft timings)', () => {
    expect(
      computeAcceptance(null, summarizeEngineView(parsePrometheus('llamacpp:requests_processing 0\n'), null), null, {
        requests: 0,
        drafted: 0,
        accepted: 0,
        predicted: 0,
      }),
    ).toEqual({ acceptLength: null, acceptRate: null, source: null });
  });
});
