// SGLang (python -m sglang.launch_server / sglang serve, and spectune's sglang-compatible simulator).
import {
  assertValidValue,
  checkFlagValues,
  readFlagSettings,
  requireParam,
  setFlag,
  skipInvocation,
  type FlagGrammar,
} from '../flags.js';
import { meanMetric, parsePrometheus, sumMetric } from '../prometheus.js';
import type {
  ArgvProblem,
  CapacityFacts,
  EngineAdapter,
  EngineInvocation,
  EngineMetrics,
  EngineSettings,
  ParamSpec,
  ParamValue,
} from '../types.js';
import { sglangSpace } from './space.js';

// SGLang uses plain argparse: underscores are not dashes (but argparse prefix abbreviations are listed as aliases).
const GRAMMAR: FlagGrammar = { underscoresAsDashes: false };

// How a command starts SGLang; spectune's simulator speaks SGLang's API and log dialect, so `spectune sim` is SGLang.
const INVOCATIONS: EngineInvocation[] = [
  { pythonModule: 'sglang.launch_server' },
  { pythonModule: 'sglang.srt.server' },
  { program: /^sglang$/, args: ['serve'] },
  { program: /^node(js)?$/, args: [/spectune(\.m?js)?$/, 'sim'] },
  { program: /^spectune$/, args: ['sim'] },
];

// Speculative algorithms SGLang accepts (NEXTN is rewritten to EAGLE internally).
const SPEC_ALGORITHMS = ['EAGLE', 'EAGLE3', 'NEXTN', 'STANDALONE', 'NGRAM', 'LOOKAHEAD'];

/** SGLang's tunable parameters; ranges are what its server_args accept or what is sane on one node. */
export const SGLANG_PARAMS: ParamSpec[] = [
  {
    key: 'speculative_algorithm',
    flag: '--speculative-algorithm',
    aliases: ['--speculative-algo'],
    type: 'enum',
    values: SPEC_ALGORITHMS,
    description: 'speculative decoding algorithm',
  },
  {
    key: 'speculative_draft_model_path',
    flag: '--speculative-draft-model-path',
    aliases: ['--speculative-draft', '--speculative-draft-model'],
    type: 'string',
    description: 'draft model path',
  },
  {
    key: 'speculative_num_steps',
    flag: '--speculative-num-steps',
    type: 'int',
    min: 1,
    max: 32,
    description: 'draft steps per verify',
  },
  {
    key: 'speculative_eagle_topk',
    flag: '--speculative-eagle-topk',
    type: 'int',
    min: 1,
    max: 32,
    description: 'draft branching factor per step',
  },
  {
    key: 'speculative_num_draft_tokens',
    flag: '--speculative-num-draft-tokens',
    type: 'int',
    min: 1,
    max: 256,
    description: 'tokens verified per step (steps+1 at topk 1)',
  },
  {
    key: 'mem_fraction_static',
    flag: '--mem-fraction-static',
    type: 'float',
    min: 0.05,
    max: 0.99,
    description: 'GPU memory fraction for weights + KV cache',
  },
  {
    key: 'cuda_graph_max_bs',
    flag: '--cuda-graph-max-bs',
    type: 'int',
    min: 1,
    max: 4096,
    description: 'largest batch captured in a CUDA graph',
  },
  {
    key: 'max_running_requests',
    flag: '--max-running-requests',
    type: 'int',
    min: 1,
    max: 65536,
    description: 'concurrent requests cap',
  },
  { key: 'max_total_tokens', flag: '--max-total-tokens', type: 'int', min: 1, description: 'KV cache token cap' },
  { key: 'context_length', flag: '--context-length', type: 'int', min: 1, description: 'model context length' },
  {
    key: 'tp_size',
    flag: '--tp-size',
    aliases: ['--tp', '--tensor-parallel-size'],
    type: 'int',
    min: 1,
    max: 64,
    description: 'tensor parallel size',
  },
  {
    key: 'dp_size',
    flag: '--dp-size',
    aliases: ['--dp', '--data-parallel-size'],
    type: 'int',
    min: 1,
    max: 64,
    description: 'data parallel size',
  },
  {
    key: 'chunked_prefill_size',
    flag: '--chunked-prefill-size',
    type: 'int',
    min: -1,
    description: 'prefill chunk (-1 disables chunking)',
  },
  {
    key: 'schedule_conservativeness',
    flag: '--schedule-conservativeness',
    type: 'float',
    min: 0,
    max: 10,
    description: 'KV reservation conservativeness',
  },
  { key: 'page_size', flag: '--page-size', type: 'int', min: 1, max: 1024, description: 'KV page size' },
  { key: 'kv_cache_dtype', flag: '--kv-cache-dtype', type: 'string', description: 'KV cache dtype' },
  { key: 'attention_backend', flag: '--attention-backend', type: 'string', description: 'attention kernel backend' },
  { key: 'disable_cuda_graph', flag: '--disable-cuda-graph', type: 'bool', description: 'run without CUDA graphs' },
  { key: 'enable_metrics', flag: '--enable-metrics', type: 'bool', description: 'expose /metrics' },
  { key: 'model_path', flag: '--model-path', aliases: ['--model'], type: 'string', description: 'model path or id' },
  { key: 'host', flag: '--host', type: 'string', description: 'listen address' },
  { key: 'port', flag: '--port', type: 'int', min: 1, max: 65535, description: 'listen port' },
];

// SGLang's capacity line (scheduler rank 0); chunked_prefill_size and available memory are version-dependent.
const CAPACITY_LINE =
  /max_total_num_tokens=(\d+), (?:chunked_prefill_size=-?\d+, )?max_prefill_tokens=\d+, max_running_requests=(\d+), context_len=(\d+)(?:, available_[cg]pu_mem=([\d.]+) GB)?/;

// SGLang's rule: with topk 1 the draft token count is forced to steps + 1 (server_args._handle_speculative_decoding).
function applyTopkOneRule(settings: EngineSettings): EngineSettings {
  const out = { ...settings };
  const steps = out.speculative_num_steps;
  if (out.speculative_eagle_topk === 1 && typeof steps === 'number') out.speculative_num_draft_tokens = steps + 1;
  out.speculative_enabled = out.speculative_algorithm !== undefined;
  return out;
}

// Normalise /metrics and /server_info: accept length prefers the lifetime average from server_info.
function parseSglangMetrics(prometheus: string | null, serverInfo: unknown | null): EngineMetrics {
  const m = parsePrometheus(prometheus ?? '');
  const info = (serverInfo && typeof serverInfo === 'object' ? serverInfo : {}) as Record<string, unknown>;
  const states = Array.isArray(info.internal_states) ? (info.internal_states as Record<string, unknown>[]) : [];
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
  return {
    acceptLength: num(states[0]?.avg_spec_accept_length) ?? meanMetric(m, 'sglang:spec_accept_length'),
    acceptRate: meanMetric(m, 'sglang:spec_accept_rate'),
    runningRequests: sumMetric(m, 'sglang:num_running_reqs'),
    queuedRequests: sumMetric(m, 'sglang:num_queue_reqs'),
    kvUsage: meanMetric(m, 'sglang:token_usage'),
    genThroughput: sumMetric(m, 'sglang:gen_throughput') ?? num(states[0]?.last_gen_throughput),
    maxRunningRequests: num(info.max_running_requests) ?? num(states[0]?.max_running_requests),
  };
}

// Capacity facts from /server_info (max_total_num_tokens, max_running_requests, context_length), or null.
function readSglangInfoCapacity(info: unknown): CapacityFacts | null {
  const j = (info && typeof info === 'object' ? info : {}) as Record<string, unknown>;
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  const facts: CapacityFacts = {
    maxTotalNumTokens: num(j.max_total_num_tokens),
    maxRunningRequests: num(j.max_running_requests),
    contextLen: num(j.context_length),
  };
  if (j.simulated === true) facts.simulated = true;
  return Object.values(facts).some((v) => v !== undefined) ? facts : null;
}

// Parse the capacity line into facts.
function parseSglangCapacity(line: string): CapacityFacts | null {
  const m = CAPACITY_LINE.exec(line);
  if (!m) return null;
  const facts: CapacityFacts = {
    maxTotalNumTokens: Number(m[1]),
    maxRunningRequests: Number(m[2]),
    contextLen: Number(m[3]),
  };
  if (m[4]) facts.availableGpuMemGb = Number(m[4]);
  return facts;
}

// Problems SGLang itself would raise: setting only some of steps/topk/draft tokens fails a bare assert.
function validateSglangArgv(argv: string[]): ArgvProblem[] {
  const problems = checkFlagValues(argv, SGLANG_PARAMS, GRAMMAR, skipInvocation(argv, INVOCATIONS));
  const s = readFlagSettings(argv, SGLANG_PARAMS, GRAMMAR, skipInvocation(argv, INVOCATIONS));
  const trio = ['speculative_num_steps', 'speculative_eagle_topk', 'speculative_num_draft_tokens'];
  const set = trio.filter((k) => s[k] !== undefined);
  if (s.speculative_algorithm !== undefined && set.length > 0 && s.speculative_num_steps === undefined) {
    problems.push({
      severity: 'error',
      flag: '--speculative-num-steps',
      message: `${set.join(', ')} set without speculative_num_steps: SGLang fails with a bare AssertionError (set all three or none)`,
    });
  }
  if (
    s.speculative_eagle_topk === 1 &&
    typeof s.speculative_num_steps === 'number' &&
    typeof s.speculative_num_draft_tokens === 'number' &&
    s.speculative_num_draft_tokens !== s.speculative_num_steps + 1
  ) {
    problems.push({
      severity: 'warning',
      flag: '--speculative-num-draft-tokens',
      message: `with --speculative-eagle-topk 1 SGLang forces speculative_num_draft_tokens to steps + 1 = ${s.speculative_num_steps + 1}`,
    });
  }
  return problems;
}

// Apply changes one key at a time, refusing values SGLang would reject.
function patchSglangArgv(argv: string[], changes: Record<string, ParamValue | null>): string[] {
  let out = [...argv];
  for (const [key, value] of Object.entries(changes)) {
    const spec = requireParam(SGLANG_PARAMS, key, 'sglang');
    if (value !== null) assertValidValue(spec, value, 'sglang');
    out = setFlag(out, spec, value, GRAMMAR, skipInvocation(out, INVOCATIONS));
  }
  return out;
}

/** The SGLang adapter (also drives `spectune sim`, which speaks SGLang's flags, logs and endpoints). */
export const sglang: EngineAdapter = {
  name: 'sglang',
  displayName: 'SGLang',
  invocations: INVOCATIONS,
  proposeSpace: sglangSpace,
  multiNode: { rankFlags: { addrFlags: ['--dist-init-addr', '--nccl-init-addr'] } },
  logDialect: {
    head: /^\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})((?: [A-Z]{2}\d+)*)\] /,
    prefixStartsRecord: true,
    uvicornStartupNotReady: true,
    ownWarmupRequest: true,
    cleanStopSigkillNote:
      "systemd reports `Failed with result 'signal'` only because SGLang SIGKILLs its own process tree after draining.",
  },
  metricNames: {
    runningRequests: ['sglang:num_running_reqs'],
    queuedRequests: ['sglang:num_queue_reqs'],
    kvUsage: ['sglang:token_usage'],
    specAcceptLength: ['sglang:spec_accept_length'],
    specAcceptRate: ['sglang:spec_accept_rate'],
    generationTokensTotal: ['sglang:generation_tokens_total'],
    genThroughput: ['sglang:gen_throughput'],
  },
  params: SGLANG_PARAMS,
  defaultPort: 30000,
  modelKey: 'model_path',
  maxRequestsKey: 'max_running_requests',
  healthPath: '/health',
  metricsPath: '/metrics',
  // Older SGLang only has /get_server_info (newer ones log a deprecation line for it, so it is the fallback).
  infoPaths: ['/server_info', '/get_server_info'],
  versionProbes: [
    { path: '/server_info', field: 'version' },
    { path: '/get_server_info', field: 'version' },
  ],
  // --api-key guards every path but /health*, /metrics* and OPTIONS (add_api_key_middleware).
  authProbePath: '/v1/models',
  cachePolicy: {
    resetEndpoint: { method: 'POST', path: '/flush_cache' },
    uniquePrefix: true,
    description:
      'SGLang: POST /flush_cache before each measured level, and a random prefix unique to the run and the request',
  },
  readyPattern: /The server is fired up and ready to roll!/,
  readSettings: (argv) => readFlagSettings(argv, SGLANG_PARAMS, GRAMMAR, skipInvocation(argv, INVOCATIONS)),
  patchArgv: patchSglangArgv,
  effectiveSettings: applyTopkOneRule,
  parseCapacity: parseSglangCapacity,
  readInfoCapacity: readSglangInfoCapacity,
  parseMetrics: parseSglangMetrics,
  validateArgv: validateSglangArgv,
};
