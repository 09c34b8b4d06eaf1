// vLLM (vllm serve / python -m vllm.entrypoints.openai.api_server).
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
import { VLLM_MULTI_NODE } from './nodes.js';
import { vllmSpace } from './space.js';
import { VLLM_SPEC_PARAMS, patchVllmSpec, readVllmSpec, validateVllmSpec } from './spec.js';

// vLLM's FlexibleArgumentParser accepts --max_model_len for --max-model-len.
const GRAMMAR: FlagGrammar = { underscoresAsDashes: true };

// How a command starts vLLM.
const INVOCATIONS: EngineInvocation[] = [
  { pythonModule: 'vllm.entrypoints.openai.api_server' },
  { program: /^vllm$/, args: ['serve'] },
];

// Flags read by the generic grammar (the speculative keys live in vllm-spec.ts).
const FLAG_PARAMS: ParamSpec[] = [
  {
    key: 'gpu_memory_utilization',
    flag: '--gpu-memory-utilization',
    type: 'float',
    min: 0.05,
    max: 1,
    description: 'fraction of GPU memory vLLM may use',
  },
  {
    key: 'max_num_seqs',
    flag: '--max-num-seqs',
    type: 'int',
    min: 1,
    max: 65536,
    description: 'concurrent sequences cap',
  },
  {
    key: 'max_num_batched_tokens',
    flag: '--max-num-batched-tokens',
    type: 'int',
    min: 1,
    description: 'tokens per scheduler step',
  },
  { key: 'max_model_len', flag: '--max-model-len', type: 'int', min: 1, description: 'context length' },
  {
    key: 'tensor_parallel_size',
    flag: '--tensor-parallel-size',
    aliases: ['-tp'],
    type: 'int',
    min: 1,
    max: 64,
    description: 'tensor parallel size',
  },
  {
    key: 'pipeline_parallel_size',
    flag: '--pipeline-parallel-size',
    aliases: ['-pp'],
    type: 'int',
    min: 1,
    max: 64,
    description: 'pipeline parallel size',
  },
  { key: 'block_size', flag: '--block-size', type: 'int', min: 1, max: 256, description: 'KV block size' },
  { key: 'kv_cache_dtype', flag: '--kv-cache-dtype', type: 'string', description: 'KV cache dtype' },
  { key: 'enable_prefix_caching', flag: '--enable-prefix-caching', type: 'bool', description: 'prefix caching' },
  { key: 'enable_chunked_prefill', flag: '--enable-chunked-prefill', type: 'bool', description: 'chunked prefill' },
  { key: 'enforce_eager', flag: '--enforce-eager', type: 'bool', description: 'no CUDA graphs' },
  { key: 'model', flag: '--model', type: 'string', description: 'model path or id' },
  { key: 'host', flag: '--host', type: 'string', description: 'listen address' },
  { key: 'port', flag: '--port', type: 'int', min: 1, max: 65535, description: 'listen port' },
];

/** vLLM's tunable parameters (speculative ones patch inside --speculative-config). */
export const VLLM_PARAMS: ParamSpec[] = [...VLLM_SPEC_PARAMS.map(({ jsonKey: _j, ...p }) => p), ...FLAG_PARAMS];

const KV_TOKENS = /GPU KV cache size: ([\d,]+) tokens/;
const CONCURRENCY = /Maximum concurrency for ([\d,]+) tokens per request: ([\d.]+)x/;
const GPU_BLOCKS = /# GPU blocks: (\d+)/;

// The positional model of `vllm serve MODEL`, when it follows the subcommand.
function positionalModel(argv: readonly string[]): string | undefined {
  return argv[1] === 'serve' && argv[2] && !argv[2].startsWith('-') ? argv[2] : undefined;
}

// Read flags, the positional model and the speculative settings in whatever form they are written.
function readVllmSettings(argv: string[]): EngineSettings {
  const from = skipInvocation(argv, INVOCATIONS);
  const settings = readFlagSettings(argv, FLAG_PARAMS, GRAMMAR, from);
  const model = positionalModel(argv);
  if (model !== undefined && settings.model === undefined) settings.model = model;
  return { ...settings, ...readVllmSpec(argv, from) };
}

// Speculation is on when a method or a draft model is configured.
function deriveVllmSettings(settings: EngineSettings): EngineSettings {
  return {
    ...settings,
    speculative_enabled: settings.speculative_method !== undefined || settings.speculative_model !== undefined,
  };
}

// Apply changes: speculative keys inside the operator's form, the rest as flags; values checked first.
function patchVllmArgv(argv: string[], changes: Record<string, ParamValue | null>): string[] {
  const spec: Record<string, ParamValue | null> = {};
  let out = [...argv];
  for (const [key, value] of Object.entries(changes)) {
    const p = requireParam(VLLM_PARAMS, key, 'vllm');
    if (value !== null) assertValidValue(p, value, 'vllm');
    if (VLLM_SPEC_PARAMS.some((s) => s.key === key)) spec[key] = value;
    else out = setFlag(out, p, value, GRAMMAR, skipInvocation(out, INVOCATIONS));
  }
  return Object.keys(spec).length ? patchVllmSpec(out, spec, skipInvocation(out, INVOCATIONS)) : out;
}

// Problems vLLM would raise at start-up.
function validateVllmArgv(argv: string[]): ArgvProblem[] {
  const from = skipInvocation(argv, INVOCATIONS);
  return [...validateVllmSpec(argv, from), ...checkFlagValues(argv, FLAG_PARAMS, GRAMMAR, from)];
}

// Start-up capacity lines: KV cache tokens, max concurrency at full length, V0 block count.
function parseVllmCapacity(line: string): CapacityFacts | null {
  const kv = KV_TOKENS.exec(line);
  if (kv) return { maxTotalNumTokens: Number(kv[1].replace(/,/g, '')) };
  const c = CONCURRENCY.exec(line);
  if (c) return { contextLen: Number(c[1].replace(/,/g, '')), maxConcurrency: Number(c[2]) };
  const b = GPU_BLOCKS.exec(line);
  return b ? { gpuBlocks: Number(b[1]) } : null;
}

// Normalise /metrics: acceptance length = 1 + accepted / drafts (bonus token included, like SGLang's).
function parseVllmMetrics(prometheus: string | null, _serverInfo: unknown | null): EngineMetrics {
  const m = parsePrometheus(prometheus ?? '');
  const accepted = sumMetric(m, 'vllm:spec_decode_num_accepted_tokens_total', 'vllm:spec_decode_num_accepted_tokens');
  const drafts = sumMetric(m, 'vllm:spec_decode_num_drafts_total', 'vllm:spec_decode_num_drafts');
  const draftTokens = sumMetric(m, 'vllm:spec_decode_num_draft_tokens_total', 'vllm:spec_decode_num_draft_tokens');
  const usage = meanMetric(m, 'vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc');
  return {
    acceptLength: accepted !== null && drafts ? 1 + accepted / drafts : null,
    acceptRate: accepted !== null && draftTokens ? accepted / draftTokens : null,
    runningRequests: sumMetric(m, 'vllm:num_requests_running'),
    queuedRequests: sumMetric(m, 'vllm:num_requests_waiting'),
    kvUsage: usage,
    genThroughput: null,
    maxRunningRequests: null,
  };
}

/** The vLLM adapter. */
export const vllm: EngineAdapter = {
  name: 'vllm',
  displayName: 'vLLM',
  invocations: INVOCATIONS,
  proposeSpace: vllmSpace,
  multiNode: VLLM_MULTI_NODE,
  logDialect: {
    head: /^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) (\d{2}-\d{2} \d{2}:\d{2}:\d{2})(?:\.\d+)? (?:\[[^\]]+\]|\S+:\d+\]) /,
    // vLLM / Ray process tags: "(EngineCore_DP0 pid=212)", "(VllmWorker rank=5 pid=45037)", "(RayWorkerWrapper pid=1, ip=10.0.0.2)", "(raylet)".
    processTag: /^\(((?:[\w.-]+(?: [\w.-]+=[\w.:-]+)*,? pid=\d+(?:, ip=[\d.]+)?)|raylet(?:, ip=[\d.]+)?)\) /,
    foreignTag: /^raylet/,
  },
  metricNames: {
    runningRequests: ['vllm:num_requests_running'],
    queuedRequests: ['vllm:num_requests_waiting'],
    kvUsage: ['vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc'],
    specDraftsTotal: ['vllm:spec_decode_num_drafts_total', 'vllm:spec_decode_num_drafts'],
    specAcceptedTotal: ['vllm:spec_decode_num_accepted_tokens_total', 'vllm:spec_decode_num_accepted_tokens'],
    specDraftTokensTotal: ['vllm:spec_decode_num_draft_tokens_total'],
    generationTokensTotal: ['vllm:generation_tokens_total'],
  },
  params: VLLM_PARAMS,
  defaultPort: 8000,
  modelKey: 'model',
  maxRequestsKey: 'max_num_seqs',
  healthPath: '/health',
  metricsPath: '/metrics',
  infoPaths: [],
  versionProbes: [{ path: '/version', field: 'version' }],
  // --api-key guards /v1/* only (/health, /metrics, /version stay open).
  authProbePath: '/v1/models',
  cachePolicy: {
    resetEndpoint: { method: 'POST', path: '/reset_prefix_cache' },
    uniquePrefix: true,
    description:
      'vLLM: POST /reset_prefix_cache before each measured level (served with VLLM_SERVER_DEV_MODE=1), and a random prefix unique to the run and the request',
  },
  readyPattern: /Application startup complete\.|Starting vLLM API server \d+ on /,
  readSettings: readVllmSettings,
  patchArgv: patchVllmArgv,
  effectiveSettings: deriveVllmSettings,
  parseCapacity: parseVllmCapacity,
  readInfoCapacity: () => null,
  parseMetrics: parseVllmMetrics,
  validateArgv: validateVllmArgv,
};
