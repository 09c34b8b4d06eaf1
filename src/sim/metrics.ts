// Prometheus exposition of the simulator's state under SGLang's metric names (pure).

/** Values sampled from the scheduler for one scrape. */
export interface MetricsSnapshot {
  modelName: string;
  running: number;
  queued: number;
  usedTokens: number;
  maxTotalNumTokens: number;
  genThroughput: number;
  specAcceptLength: number | null;
  specAcceptRate: number | null;
  promptTokensTotal: number;
  generationTokensTotal: number;
  requestsTotal: number;
}

// One gauge or counter with SGLang's labels.
function renderMetric(name: string, type: 'gauge' | 'counter', help: string, labels: string, value: number): string {
  return `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${name}{${labels}} ${Number.isFinite(value) ? value : 0}\n`;
}

// The text of GET /metrics.
export function renderMetrics(s: MetricsSnapshot): string {
  const gl = `engine_type="unified",model_name="${s.modelName}",pp_rank="0",tp_rank="0"`;
  const cl = `model_name="${s.modelName}"`;
  const parts = [
    renderMetric('sglang:num_running_reqs', 'gauge', 'The number of running requests.', gl, s.running),
    renderMetric('sglang:num_queue_reqs', 'gauge', 'The number of requests in the waiting queue.', gl, s.queued),
    renderMetric('sglang:num_used_tokens', 'gauge', 'The number of used tokens.', gl, s.usedTokens),
    renderMetric('sglang:token_usage', 'gauge', 'The token usage.', gl, s.usedTokens / s.maxTotalNumTokens),
    renderMetric(
      'sglang:max_total_num_tokens',
      'gauge',
      'Maximum total number of tokens in the KV cache pool.',
      gl,
      s.maxTotalNumTokens,
    ),
    renderMetric('sglang:gen_throughput', 'gauge', 'The generation throughput (token/s).', gl, s.genThroughput),
    renderMetric('sglang:cache_hit_rate', 'gauge', 'The prefix cache hit rate.', gl, 0),
    renderMetric(
      'sglang:spec_accept_length',
      'gauge',
      'The average acceptance length of speculative decoding.',
      gl,
      s.specAcceptLength ?? 0,
    ),
    renderMetric(
      'sglang:spec_accept_rate',
      'gauge',
      'The average acceptance rate of speculative decoding (`accepted tokens / total draft tokens` in batch).',
      gl,
      s.specAcceptRate ?? 0,
    ),
    renderMetric(
      'sglang:prompt_tokens_total',
      'counter',
      'Number of prefill tokens processed.',
      cl,
      s.promptTokensTotal,
    ),
    renderMetric(
      'sglang:generation_tokens_total',
      'counter',
      'Number of generation tokens processed.',
      cl,
      s.generationTokensTotal,
    ),
    renderMetric('sglang:num_requests_total', 'counter', 'Number of requests processed.', cl, s.requestsTotal),
  ];
  return parts.join('');
}
