// The simulator's physics: memory → capacity, and speculative decoding → per-request decode speed (pure, deterministic).
import type { SimProfile } from './profile.js';
import type { SimSettings } from './settings.js';

const GIB = 1024 ** 3;
const MIB_PER_GB = 1024;
/** SGLang's request-pool bounds: min(max(int(tokens / context_len * 512), 2048), 4096). */
const REQ_POOL = { perContext: 512, min: 2048, max: 4096 } as const;

/** Memory facts of one launch, per GPU, as SGLang would log them. */
export interface CapacityOk {
  ok: true;
  maxTotalNumTokens: number;
  maxRunningRequests: number;
  /** `available_gpu_mem` of the capacity line: memory left after everything was allocated. */
  availableGpuMemGb: number;
  totalGpuMemGb: number;
  /** `avail mem` right after the weights were loaded. */
  availAfterWeightsGb: number;
  weightsGb: number;
  draftWeightsGb: number;
  kvCacheGb: number;
  statePoolGb: number;
  cudaGraphGb: number;
  /** Recurrent-state slots (hybrid models); null otherwise. */
  maxStateSlots: number | null;
}

/** Why a launch cannot start. */
export interface CapacityFailure {
  ok: false;
  reason: 'not_enough_memory' | 'weights_do_not_fit';
  /** Memory short of the static budget, per GPU, GB (positive). */
  shortByGb: number;
  availAfterWeightsGb: number;
  totalGpuMemGb: number;
}

/** Outcome of the memory model. */
export type Capacity = CapacityOk | CapacityFailure;

// Tokens one request occupies per decode step in the CUDA graphs and KV: 1 without speculation.
function tokensPerStep(settings: SimSettings): number {
  return settings.speculative ? settings.speculative.numDraftTokens : 1;
}

// Per-GPU CUDA graph memory: grows with cuda_graph_max_bs × tokens per request.
export function computeCudaGraphGb(profile: SimProfile, settings: SimSettings): number {
  if (settings.disableCudaGraph) return 0;
  const m = profile.memory;
  return m.cuda_graph_base_gb + m.cuda_graph_gb_per_token * settings.cudaGraphMaxBs * tokensPerStep(settings);
}

// Decide max_total_num_tokens and max_running_requests, or the start-up failure, exactly from the profile.
export function computeCapacity(profile: SimProfile, settings: SimSettings): Capacity {
  const m = profile.memory;
  const total = profile.hardware.gpu_memory_gb;
  const tp = settings.tpSize;
  const weightsGb = m.weights_gb / tp;
  const draftWeightsGb = settings.speculative ? m.draft_weights_gb / tp : 0;
  const availAfterWeightsGb = total - m.runtime_overhead_gb - weightsGb - draftWeightsGb;
  if (availAfterWeightsGb <= 0) {
    return {
      ok: false,
      reason: 'weights_do_not_fit',
      shortByGb: -availAfterWeightsGb,
      availAfterWeightsGb,
      totalGpuMemGb: total,
    };
  }
  const cudaGraphGb = computeCudaGraphGb(profile, settings);
  const rest = availAfterWeightsGb - total * (1 - settings.memFractionStatic) - cudaGraphGb;
  const bytesPerToken = (m.kv_bytes_per_token + (settings.speculative ? m.draft_kv_bytes_per_token : 0)) / tp;
  const statePoolGb = m.state_pool ? rest * m.state_pool.fraction : 0;
  const kvCacheGb = rest - statePoolGb;
  const page = settings.pageSize;
  let tokens = Math.floor((kvCacheGb * GIB) / bytesPerToken / page) * page;
  if (settings.maxTotalTokens !== null) tokens = Math.min(tokens, settings.maxTotalTokens);
  if (rest <= 0 || tokens <= 0) {
    return {
      ok: false,
      reason: 'not_enough_memory',
      shortByGb: Math.max(-rest, 0),
      availAfterWeightsGb,
      totalGpuMemGb: total,
    };
  }
  const maxStateSlots = computeStateSlots(profile, settings, statePoolGb);
  const maxRunningRequests = computeMaxRunningRequests(settings, tokens, maxStateSlots);
  const availableGpuMemGb = availAfterWeightsGb - kvCacheGb - statePoolGb - cudaGraphGb;
  return {
    ok: true,
    maxTotalNumTokens: tokens,
    maxRunningRequests,
    availableGpuMemGb,
    totalGpuMemGb: total,
    availAfterWeightsGb,
    weightsGb,
    draftWeightsGb,
    kvCacheGb,
    statePoolGb,
    cudaGraphGb,
    maxStateSlots,
  };
}

// Hybrid models: how many requests' recurrent states (plus per-draft-token intermediates) fit in the pool.
function computeStateSlots(profile: SimProfile, settings: SimSettings, poolGb: number): number | null {
  const sp = profile.memory.state_pool;
  if (!sp) return null;
  const draft = settings.speculative ? settings.speculative.numDraftTokens : 0;
  return Math.floor((poolGb * MIB_PER_GB) / (sp.state_mb_per_request + draft * sp.mb_per_draft_token));
}

// SGLang's rule: min(configured or max_total_num_tokens // 2, request pool size), bounded by state slots.
function computeMaxRunningRequests(settings: SimSettings, tokens: number, stateSlots: number | null): number {
  const pool = Math.min(
    Math.max(Math.floor((tokens / settings.contextLength) * REQ_POOL.perContext), REQ_POOL.min),
    REQ_POOL.max,
  );
  let mrr = Math.min(settings.maxRunningRequests ?? Math.floor(tokens / 2), pool);
  if (stateSlots !== null) mrr = Math.min(mrr, stateSlots);
  return Math.max(mrr, 1);
}

// Conditional acceptance of draft position i (1-based) for the configured tree width.
function positionAcceptance(profile: SimProfile, i: number, topk: number): number {
  const s = profile.speculative;
  const p = i <= s.acceptance.length ? s.acceptance[i - 1] : s.acceptance_tail;
  return 1 - (1 - p) ** (topk ** s.topk_exponent);
}

// Probability that the first k draft tokens are all accepted, for k = 1..depth.
export function computeAcceptanceCurve(profile: SimProfile, settings: SimSettings): number[] {
  const spec = settings.speculative;
  if (!spec) return [];
  const depth = Math.min(spec.numSteps, spec.numDraftTokens - 1);
  const curve: number[] = [];
  let all = 1;
  for (let i = 1; i <= depth; i++) {
    all *= positionAcceptance(profile, i, spec.topk);
    curve.push(all);
  }
  return curve;
}

// Mean tokens emitted per verify step (accepted drafts + the bonus token), as SGLang's `accept len` counts them.
export function expectedAcceptLength(profile: SimProfile, settings: SimSettings): number {
  return 1 + computeAcceptanceCurve(profile, settings).reduce((a, b) => a + b, 0);
}

// Wall time of one decode (draft + verify) step for the whole batch, in ms, without noise.
export function computeStepMs(profile: SimProfile, settings: SimSettings, batchSize: number): number {
  const t = profile.timing;
  const b = Math.max(1, batchSize);
  const tokens = tokensPerStep(settings);
  const target = t.target_step_ms + t.batch_ms_per_request * (b - 1) + t.verify_ms_per_token * (b * tokens - 1);
  const steps = settings.speculative ? settings.speculative.numSteps : 0;
  return target + steps * (t.draft_step_ms + t.draft_ms_per_request * (b - 1));
}

// Decode speed one request sees (output tokens/s) when `batchSize` requests decode together.
export function predictDecodeTokensPerSec(profile: SimProfile, settings: SimSettings, batchSize: number): number {
  return (expectedAcceptLength(profile, settings) * 1000) / computeStepMs(profile, settings, batchSize);
}
