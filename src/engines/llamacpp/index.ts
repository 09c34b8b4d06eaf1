// llama.cpp's llama-server (flags as of v0.4.0, tools/server and common/arg.cpp).
import {
  assertValidValue,
  checkFlagValues,
  readFlagSettings,
  requireParam,
  setFlag,
  skipInvocation,
  type FlagGrammar,
} from '../flags.js';
import { parsePrometheus, sumMetric } from '../prometheus.js';
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
import { LLAMACPP_MULTI_NODE } from './nodes.js';
import { llamaSpace } from './space.js';

// llama.cpp's own parser: exact spellings only.
const GRAMMAR: FlagGrammar = { underscoresAsDashes: false };

// How a command starts llama.cpp's server.
const INVOCATIONS: EngineInvocation[] = [{ program: /^llama-server(\.exe)?$/ }];

// common/speculative.cpp common_speculative_type_from_name_map (forks add more, e.g. "dflash").
const SPEC_TYPES = [
  'none',
  'draft-simple',
  'draft-eagle3',
  'draft-mtp',
  'draft-dflash',
  'draft-dspark',
  'ngram-simple',
  'ngram-map-k',
  'ngram-map-k4v',
  'ngram-mod',
  'ngram-cache',
];
// Default of params.speculative.draft.n_max (common/common.h) when a draft type is on and the flag is absent.
const DEFAULT_DRAFT_N_MAX = 3;
// Largest draft length worth trying: acceptance decays geometrically, so longer drafts only cost compute.
const MAX_DRAFT_N = 64;

/** llama-server's tunable parameters. */
export const LLAMACPP_PARAMS: ParamSpec[] = [
  {
    key: 'spec_type',
    flag: '--spec-type',
    type: 'enum',
    values: SPEC_TYPES,
    description: 'speculative decoding type (draft-simple needs -md)',
  },
  {
    key: 'spec_draft_n_max',
    flag: '--spec-draft-n-max',
    type: 'int',
    min: 0,
    max: MAX_DRAFT_N,
    description: 'max tokens drafted per step',
  },
  {
    key: 'spec_draft_n_min',
    flag: '--spec-draft-n-min',
    type: 'int',
    min: 0,
    max: MAX_DRAFT_N,
    description: 'min draft tokens to use a draft',
  },
  {
    key: 'spec_draft_p_min',
    flag: '--spec-draft-p-min',
    aliases: ['--draft-p-min'],
    type: 'float',
    min: 0,
    max: 1,
    description: 'min draft token probability',
  },
  {
    key: 'model_draft',
    flag: '--spec-draft-model',
    aliases: ['-md', '--model-draft'],
    type: 'string',
    description: 'draft model GGUF (does NOT enable speculation alone)',
  },
  {
    key: 'spec_draft_ngl',
    flag: '--spec-draft-ngl',
    aliases: ['-ngld', '--gpu-layers-draft', '--n-gpu-layers-draft'],
    type: 'string',
    description: 'draft layers on GPU (N, auto, all)',
  },
  { key: 'model', flag: '--model', aliases: ['-m'], type: 'string', description: 'target model GGUF' },
  {
    key: 'ctx_size',
    flag: '--ctx-size',
    aliases: ['-c'],
    type: 'int',
    min: 0,
    description: 'context size (0 = from model)',
  },
  {
    key: 'threads',
    flag: '--threads',
    aliases: ['-t'],
    type: 'int',
    min: -1,
    max: 1024,
    description: 'generation threads',
  },
  {
    key: 'threads_batch',
    flag: '--threads-batch',
    aliases: ['-tb'],
    type: 'int',
    min: -1,
    max: 1024,
    description: 'batch/prompt threads',
  },
  {
    key: 'parallel',
    flag: '--parallel',
    aliases: ['-np'],
    type: 'int',
    min: -1,
    max: 1024,
    description: 'server slots',
  },
  { key: 'batch_size', flag: '--batch-size', aliases: ['-b'], type: 'int', min: 1, description: 'logical batch size' },
  {
    key: 'ubatch_size',
    flag: '--ubatch-size',
    aliases: ['-ub'],
    type: 'int',
    min: 1,
    description: 'physical batch size',
  },
  {
    key: 'n_gpu_layers',
    flag: '--n-gpu-layers',
    aliases: ['-ngl', '--gpu-layers'],
    type: 'string',
    description: 'layers on GPU (N, auto, all)',
  },
  {
    key: 'flash_attn',
    flag: '--flash-attn',
    aliases: ['-fa'],
    type: 'enum',
    values: ['on', 'off', 'auto', '1', '0'],
    description: 'flash attention (takes a value)',
  },
  { key: 'cache_type_k', flag: '--cache-type-k', aliases: ['-ctk'], type: 'string', description: 'K cache type' },
  { key: 'cache_type_v', flag: '--cache-type-v', aliases: ['-ctv'], type: 'string', description: 'V cache type' },
  {
    key: 'sse_ping_interval',
    flag: '--sse-ping-interval',
    type: 'int',
    min: -1,
    description: 'SSE ping seconds; also how long a stop waits for open streams',
  },
  { key: 'metrics', flag: '--metrics', type: 'bool', description: 'expose /metrics' },
  { key: 'host', flag: '--host', type: 'string', description: 'listen address' },
  { key: 'port', flag: '--port', type: 'int', min: 1, max: 65535, description: 'listen port' },
];

// Flags removed from llama.cpp (common/arg.cpp "removed params"): each is a hard start-up error.
const REMOVED_FLAGS: Record<string, string> = {
  '--draft': '--spec-draft-n-max',
  '--draft-n': '--spec-draft-n-max',
  '--draft-max': '--spec-draft-n-max',
  '--draft-min': '--spec-draft-n-min',
  '--draft-n-min': '--spec-draft-n-min',
  '--spec-ngram-size-n': '--spec-ngram-*-size-n',
  '--spec-ngram-size-m': '--spec-ngram-*-size-m',
  '--spec-ngram-min-hits': '--spec-ngram-*-min-hits',
};

// The server's per-request timing lines; v0.4.0 says "draft acceptance =", older builds "draft acceptance rate =".
const DRAFT_LINE =
  /draft acceptance(?: rate)? = ([\d.]+) \(\s*(\d+) accepted \/\s*(\d+) generated\)(?:, mean len =\s*([\d.]+))?/;
const EVAL_LINE = /^(?!.*prompt).*\beval time =\s*([\d.]+) ms \/\s*(\d+) tokens \(.*?([\d.]+) tokens per second\)/;

/** What one request's print_timing lines say. */
export interface LlamaTimings {
  acceptRate: number | null;
  accepted: number | null;
  drafted: number | null;
  meanLen: number | null;
  decodeTokPerSec: number | null;
}

// Read the last print_timing draft and eval lines from a block of llama-server log text.
export function parseTimingLines(text: string): LlamaTimings {
  const out: LlamaTimings = { acceptRate: null, accepted: null, drafted: null, meanLen: null, decodeTokPerSec: null };
  for (const line of text.split('\n')) {
    const d = DRAFT_LINE.exec(line);
    if (d)
      Object.assign(out, {
        acceptRate: Number(d[1]),
        accepted: Number(d[2]),
        drafted: Number(d[3]),
        meanLen: d[4] ? Number(d[4]) : null,
      });
    const e = EVAL_LINE.exec(line);
    if (e) out.decodeTokPerSec = Number(e[3]);
  }
  return out;
}

// Speculation is on only with a --spec-type other than none; -md alone loads a draft that is never used.
function deriveLlamaSettings(settings: EngineSettings): EngineSettings {
  const out = { ...settings };
  const type = typeof out.spec_type === 'string' ? out.spec_type : 'none';
  const enabled = type.split(',').some((t) => t !== 'none' && t !== '');
  out.speculative_enabled = enabled;
  if (!enabled) delete out.spec_draft_n_max;
  else if (type.startsWith('draft') && out.spec_draft_n_max === undefined) out.spec_draft_n_max = DEFAULT_DRAFT_N_MAX;
  return out;
}

// Removed flags (errors naming the replacement), -md without --spec-type, draft-simple without a draft model.
function validateLlamaArgv(argv: string[]): ArgvProblem[] {
  const from = skipInvocation(argv, INVOCATIONS);
  const problems: ArgvProblem[] = [];
  for (const tok of argv.slice(from)) {
    const flag = tok.split('=')[0];
    const replacement = REMOVED_FLAGS[flag];
    if (replacement) {
      problems.push({
        severity: 'error',
        flag,
        replacement,
        message: `${flag} has been removed from llama-server (hard start-up error): use ${replacement}`,
      });
    }
  }
  problems.push(...checkFlagValues(argv, LLAMACPP_PARAMS, GRAMMAR, from));
  const s = readFlagSettings(argv, LLAMACPP_PARAMS, GRAMMAR, from);
  if (s.model_draft !== undefined && s.spec_type === undefined) {
    problems.push({
      severity: 'warning',
      flag: '-md',
      message:
        'a draft model (-md) without --spec-type does NOT enable speculative decoding: add --spec-type draft-simple',
    });
  }
  if (s.spec_type === 'draft-simple' && s.model_draft === undefined) {
    problems.push({
      severity: 'warning',
      flag: '--spec-type',
      message:
        '--spec-type draft-simple without -md: llama-server logs "draft-simple requires a draft context" and serves without speculation',
    });
  }
  return problems;
}

// Normalise /metrics (with --metrics) and a completion's `timings` object or log text.
function parseLlamaMetrics(prometheus: string | null, serverInfo: unknown | null): EngineMetrics {
  const m = parsePrometheus(prometheus ?? '');
  let acceptRate: number | null = null;
  let acceptLength: number | null = null;
  if (typeof serverInfo === 'string') {
    const t = parseTimingLines(serverInfo);
    acceptRate = t.acceptRate;
    acceptLength = t.meanLen;
  } else if (serverInfo && typeof serverInfo === 'object') {
    const obj = serverInfo as { timings?: Record<string, unknown> } & Record<string, unknown>;
    const timings = (obj.timings ?? obj) as Record<string, unknown>;
    const n = timings.draft_n,
      acc = timings.draft_n_accepted;
    if (typeof n === 'number' && typeof acc === 'number' && n > 0) acceptRate = acc / n;
  }
  return {
    acceptLength,
    acceptRate,
    runningRequests: sumMetric(m, 'llamacpp:requests_processing'),
    queuedRequests: sumMetric(m, 'llamacpp:requests_deferred'),
    kvUsage: sumMetric(m, 'llamacpp:kv_cache_usage_ratio'),
    genThroughput: sumMetric(m, 'llamacpp:predicted_tokens_seconds'),
    maxRunningRequests: null,
  };
}

// llama-server logs its slot context at load: "n_slots = 1, n_ctx_slot = 4096".
function parseLlamaCapacity(line: string): CapacityFacts | null {
  const m = /n_slots = (\d+), n_ctx_slot = (\d+)/.exec(line);
  return m ? { maxRunningRequests: Number(m[1]), contextLen: Number(m[2]) } : null;
}

// Apply changes one key at a time, refusing values llama-server would reject.
function patchLlamaArgv(argv: string[], changes: Record<string, ParamValue | null>): string[] {
  let out = [...argv];
  for (const [key, value] of Object.entries(changes)) {
    const spec = requireParam(LLAMACPP_PARAMS, key, 'llamacpp');
    if (value !== null) assertValidValue(spec, value, 'llamacpp');
    out = setFlag(out, spec, value, GRAMMAR, skipInvocation(out, INVOCATIONS));
  }
  return out;
}

/** The llama.cpp llama-server adapter. */
export const llamacpp: EngineAdapter = {
  name: 'llamacpp',
  displayName: 'llama-server',
  invocations: INVOCATIONS,
  defaultMaxRequests: 1,
  proposeSpace: llamaSpace,
  multiNode: LLAMACPP_MULTI_NODE,
  // llama-server reads LLAMA_ARG_<FLAG> for most flags (common/arg.cpp set_env); command-line flags override them.
  flagEnvPrefix: 'LLAMA_ARG_',
  logDialect: {
    hint: /^(?:llama_|ggml_|gguf_|srv {1,4}\w|slot {1,6}\w|main: |common_|load_tensors:|print_info:|build: )/,
  },
  metricNames: {
    runningRequests: ['llamacpp:requests_processing'],
    queuedRequests: ['llamacpp:requests_deferred'],
    specDraftsTotal: ['llamacpp:spec_decode_num_drafts_total'],
    specAcceptedTotal: ['llamacpp:spec_decode_num_accepted_tokens_total'],
    specDraftTokensTotal: ['llamacpp:spec_decode_num_draft_tokens_total'],
    generationTokensTotal: ['llamacpp:tokens_predicted_total'],
  },
  params: LLAMACPP_PARAMS,
  defaultPort: 8080,
  modelKey: 'model',
  maxRequestsKey: 'parallel',
  healthPath: '/health',
  metricsPath: '/metrics',
  infoPaths: [],
  versionProbes: [{ path: '/props', field: 'build_info' }],
  // --api-key guards every path but /health, /v1/health, /models, /v1/models, /api/tags (so /props and /metrics too).
  authProbePath: '/props',
  cachePolicy: {
    requestFields: { cache_prompt: false },
    uniquePrefix: false,
    description:
      'llama.cpp: cache_prompt=false on every request (no KV reuse between requests; tools/server server-task.h)',
  },
  readyPattern: /(?:server is )?listening on https?:\/\//,
  readSettings: (argv) => readFlagSettings(argv, LLAMACPP_PARAMS, GRAMMAR, skipInvocation(argv, INVOCATIONS)),
  patchArgv: patchLlamaArgv,
  effectiveSettings: deriveLlamaSettings,
  parseCapacity: parseLlamaCapacity,
  readInfoCapacity: () => null,
  parseMetrics: parseLlamaMetrics,
  validateArgv: validateLlamaArgv,
};
