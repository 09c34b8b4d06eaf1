// The simulator's profile format: one JSON file per simulated model + hardware, validated here (pure).
import { z } from 'zod';

const positive = z.number().positive();
const nonNegative = z.number().nonnegative();
const fraction = z.number().min(0).max(1);

/** Recurrent-state pool of hybrid (linear-attention / Mamba-style) models; it bounds max_running_requests. */
const StatePoolSchema = z.object({
  fraction: fraction.describe('share of the memory left after weights and CUDA graphs that goes to the state pool'),
  state_mb_per_request: positive.describe('recurrent state per request, per GPU, in MiB'),
  mb_per_draft_token: nonNegative.describe('extra intermediate state per speculative draft token, per GPU, in MiB'),
});

/** Everything the memory model needs; sizes are for the whole model unless marked per GPU. */
const MemorySchema = z.object({
  weights_gb: positive.describe('target model weights, whole model, GB (split evenly over tp_size GPUs)'),
  draft_weights_gb: nonNegative.describe(
    'draft / MTP weights, whole model, GB (only loaded with speculative decoding)',
  ),
  kv_bytes_per_token: positive.describe('K+V bytes per token, all layers, whole model (split over tp_size)'),
  draft_kv_bytes_per_token: nonNegative.describe('draft model K+V bytes per token, whole model'),
  runtime_overhead_gb: nonNegative.describe('per-GPU memory taken by CUDA context, NCCL and activations'),
  cuda_graph_base_gb: nonNegative.describe('per-GPU CUDA graph memory independent of batch size'),
  cuda_graph_gb_per_token: nonNegative.describe(
    'per-GPU CUDA graph memory per captured token (cuda_graph_max_bs x tokens per request)',
  ),
  state_pool: StatePoolSchema.optional().describe('hybrid models only: recurrent-state pool'),
});

/** Timing of start-up and of one decode step; step time = base + batch and token terms + draft steps. */
const TimingSchema = z.object({
  load_seconds: positive.describe('start-up time from launch to ready at time scale 1'),
  target_step_ms: positive.describe('one target-model forward at batch 1 with one token'),
  batch_ms_per_request: nonNegative.describe('extra forward time per additional request in the batch'),
  verify_ms_per_token: nonNegative.describe('extra forward time per additional verified token (batch x draft tokens)'),
  draft_step_ms: nonNegative.describe('one draft-model step at batch 1'),
  draft_ms_per_request: nonNegative.describe('extra draft step time per additional request in the batch'),
  prefill_ms_per_token: nonNegative.describe('prefill time per prompt token'),
  jitter: fraction.describe('relative random noise on each step time (server only; the pure model has none)'),
});

/** Acceptance of speculative drafts. */
const SpeculativeSchema = z.object({
  acceptance: z
    .array(fraction)
    .min(1)
    .describe('conditional acceptance rate of draft position 1, 2, ... given the previous ones were accepted'),
  acceptance_tail: fraction.describe('conditional acceptance for positions beyond the list'),
  topk_exponent: nonNegative.describe('tree drafts: a position is rejected with (1-p)^(topk^topk_exponent)'),
  algorithms: z
    .array(z.enum(['EAGLE', 'EAGLE3', 'NEXTN', 'STANDALONE']))
    .min(1)
    .describe('algorithms this model supports'),
});

/** Defaults SGLang would pick for this model and hardware when a flag is absent. */
const DefaultsSchema = z.object({
  tp_size: z.number().int().positive(),
  mem_fraction_static: fraction,
  cuda_graph_max_bs: z.number().int().positive(),
  chunked_prefill_size: z.number().int(),
  page_size: z.number().int().positive().default(1),
});

/** Faults the profile injects by default (the --sim-fault flag adds or overrides). */
export const FaultsSchema = z.object({
  crash_after: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('scheduler crashes (CUDA illegal memory access) after N finished requests'),
  cuda_oom_batch: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('torch.OutOfMemoryError when the running batch reaches N requests'),
  hang_after: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('scheduler stops after N finished requests; watchdog timeout follows'),
});

/** One simulated model on one hardware setup. */
export const ProfileSchema = z.object({
  name: z.string().min(1),
  description: z.string(),
  model: z.object({
    path: z.string().min(1).describe('model path the profile stands for (default --model-path)'),
    architecture: z.string().describe('class name logged at load, e.g. Qwen3NextForCausalLM'),
    dtype: z.string().default('torch.bfloat16'),
    context_length: z.number().int().positive(),
    kind: z.enum(['dense', 'moe', 'hybrid']),
    draft_model_path: z.string().optional(),
  }),
  hardware: z.object({
    gpu_name: z.string(),
    gpu_memory_gb: positive.describe('memory per GPU as torch reports it, GB'),
  }),
  defaults: DefaultsSchema,
  memory: MemorySchema,
  timing: TimingSchema,
  speculative: SpeculativeSchema,
  faults: FaultsSchema.default({}),
});

/** A validated profile. */
export type SimProfile = z.infer<typeof ProfileSchema>;
/** Faults to inject. */
export type SimFaults = z.infer<typeof FaultsSchema>;

// Validate parsed JSON as a profile; returns the issues as `path: message` lines instead of throwing.
export function validateProfile(json: unknown): { ok: true; profile: SimProfile } | { ok: false; errors: string[] } {
  const r = ProfileSchema.safeParse(json);
  if (r.success) return { ok: true, profile: r.data };
  return { ok: false, errors: r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`) };
}

// JSON Schema of the profile format, for editors (profiles/profile.schema.json is generated from this).
export function renderProfileJsonSchema(): unknown {
  const schema = z.toJSONSchema(ProfileSchema, { io: 'input' }) as Record<string, unknown>;
  return {
    ...schema,
    title: 'spectune sim profile',
    description: 'One simulated model on one hardware setup (see docs/sim.md).',
  };
}
