import { describe, expect, it } from 'vitest';
import { computeAcceptLength, parsePrometheus, summarizeEngineView } from './prometheus.js';

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
    const v = summarizeEngineView(parsePrometheus(SGLANG), { internal_states: [{ avg_spec_accept_length: 2.4, max_running_requests: 21 }] });
    expect(v).toMatchObject({ runningRequests: 21, kvUsage: 0.6, specAcceptLength: 2.8, serverAvgAcceptLength: 2.4, maxRunningRequests: 21 });
  });

  it('maps vLLM and llama.cpp names onto the same keys, null when absent', () => {
    expect(summarizeEngineView(parsePrometheus(vllm(10, 15)), null)).toMatchObject({ runningRequests: 3, kvUsage: 0.25, specDraftsTotal: 10, specAcceptLength: null });
    expect(summarizeEngineView(parsePrometheus('llamacpp:requests_processing 2\nllamacpp:requests_deferred 1\n'), null)).toMatchObject({ runningRequests: 2, queuedRequests: 1, kvUsage: null });
  });
});

describe('computeAcceptLength', () => {
  it('uses the vLLM counter deltas of the level: 1 + accepted / drafts', () => {
    const before = summarizeEngineView(parsePrometheus(vllm(100, 150)), null);
    const after = summarizeEngineView(parsePrometheus(vllm(300, 550)), null);
    expect(computeAcceptLength(before, after)).toBe(3);
  });

  it('prefers the SGLang gauge read mid-level, then after, then the lifetime average', () => {
    const view = (gauge: number | null, lifetime: number | null) => ({ ...summarizeEngineView(null, null), specAcceptLength: gauge, serverAvgAcceptLength: lifetime });
    expect(computeAcceptLength(null, view(0, 2.2), view(3.1, null))).toBe(3.1);
    expect(computeAcceptLength(null, view(2.9, 2.2))).toBe(2.9);
    expect(computeAcceptLength(null, view(0, 2.2))).toBe(2.2);
    expect(computeAcceptLength(null, view(null, null))).toBeNull();
    expect(computeAcceptLength(null, null)).toBeNull();
  });
});
