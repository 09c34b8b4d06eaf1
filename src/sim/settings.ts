// Engine settings in force for one simulated launch: profile defaults + flags + SGLang's derivation rules (pure).
import type { SimProfile } from './profile.js';

/** Speculative decoding settings after SGLang's rules were applied. */
export interface SpecSettings {
  algorithm: 'EAGLE' | 'EAGLE3' | 'NEXTN' | 'STANDALONE';
  numSteps: number;
  topk: number;
  numDraftTokens: number;
}

/** Settings the memory and throughput models read. */
export interface SimSettings {
  tpSize: number;
  nnodes: number;
  memFractionStatic: number;
  cudaGraphMaxBs: number;
  disableCudaGraph: boolean;
  /** --max-running-requests, or null when unset. */
  maxRunningRequests: number | null;
  /** --max-total-tokens, or null when unset. */
  maxTotalTokens: number | null;
  contextLength: number;
  chunkedPrefillSize: number;
  pageSize: number;
  speculative: SpecSettings | null;
}

/** Settings as flags give them (snake_case like SGLang's ServerArgs); absent keys take the profile defaults. */
export interface SettingsInput {
  tp_size?: number;
  nnodes?: number;
  mem_fraction_static?: number;
  cuda_graph_max_bs?: number;
  disable_cuda_graph?: boolean;
  max_running_requests?: number;
  max_total_tokens?: number;
  context_length?: number;
  chunked_prefill_size?: number;
  page_size?: number;
  speculative_algorithm?: string;
  speculative_num_steps?: number;
  speculative_eagle_topk?: number;
  speculative_num_draft_tokens?: number;
}

/** SGLang's auto choice (num_steps, topk, num_draft_tokens) when only the algorithm is given (recent versions). */
const AUTO_SPEC_PARAMS = { numSteps: 3, topk: 1, numDraftTokens: 4 } as const;

/** The exact warning SGLang logs when it rewrites the draft-token count (server_args.py). */
export const DRAFT_TOKENS_ADJUSTED_MSG =
  'speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1';

// Apply SGLang's speculative rules: auto-choice, NEXTN→EAGLE, and draft tokens = steps + 1 when topk == 1.
export function resolveSpeculative(input: SettingsInput): { spec: SpecSettings | null; adjusted: boolean } {
  const algo = input.speculative_algorithm;
  if (!algo) return { spec: null, adjusted: false };
  const algorithm = (algo === 'NEXTN' ? 'EAGLE' : algo) as SpecSettings['algorithm'];
  const auto = input.speculative_num_steps === undefined;
  const numSteps = input.speculative_num_steps ?? AUTO_SPEC_PARAMS.numSteps;
  const topk = input.speculative_eagle_topk ?? (auto ? AUTO_SPEC_PARAMS.topk : 1);
  const given = input.speculative_num_draft_tokens ?? (auto ? AUTO_SPEC_PARAMS.numDraftTokens : undefined);
  const adjusted = topk === 1 && given !== numSteps + 1;
  const numDraftTokens = adjusted || given === undefined ? numSteps + 1 : given;
  return { spec: { algorithm, numSteps, topk, numDraftTokens }, adjusted };
}

// Fill every setting from the flags given, falling back to the profile's defaults.
export function resolveSettings(profile: SimProfile, input: SettingsInput = {}): SimSettings {
  const d = profile.defaults;
  return {
    tpSize: input.tp_size ?? d.tp_size,
    nnodes: input.nnodes ?? 1,
    memFractionStatic: input.mem_fraction_static ?? d.mem_fraction_static,
    cudaGraphMaxBs: input.cuda_graph_max_bs ?? d.cuda_graph_max_bs,
    disableCudaGraph: input.disable_cuda_graph ?? false,
    maxRunningRequests: input.max_running_requests ?? null,
    maxTotalTokens: input.max_total_tokens ?? null,
    contextLength: input.context_length ?? profile.model.context_length,
    chunkedPrefillSize: input.chunked_prefill_size ?? d.chunked_prefill_size,
    pageSize: input.page_size ?? d.page_size,
    speculative: resolveSpeculative(input).spec,
  };
}
