// The spectune.yaml schema: one zod source for validation, defaults, TypeScript types and the editor JSON Schema.
import { z } from 'zod';
import { ENGINE_NAMES } from '../engines/registry.js';
import type { EngineName } from '../engines/types.js';
import { slurmSchema } from './schema-slurm.js';

/** Scalar metrics of one benchmark level (BenchRun), addressed as `field` or `field.stat`. */
export const METRICS = [
  'outputTokensPerSec',
  'requestsPerSec',
  'acceptLength',
  'decodeTokensPerSec.mean',
  'decodeTokensPerSec.p50',
  'decodeTokensPerSec.p90',
  'decodeTokensPerSec.p99',
  'ttftMs.mean',
  'ttftMs.p50',
  'ttftMs.p90',
  'ttftMs.p99',
  'itlMs.mean',
  'itlMs.p50',
  'itlMs.p90',
  'itlMs.p99',
  'e2eMs.mean',
  'e2eMs.p50',
  'e2eMs.p90',
  'e2eMs.p99',
] as const;

/** A metric name (see METRICS). */
export type MetricName = (typeof METRICS)[number];

// biome-ignore lint/complexity/noUselessEscapeInRegex: in the JSON schema `\[` stays valid under the v flag
const HOST_SPEC = /^(?:[A-Za-z0-9._-]+@)?[A-Za-z0-9._:\[\]-]+$/;
const settingValue = z.union([z.number(), z.string(), z.boolean()]);
/** Benchmark timeouts of a campaign when spectune.yaml does not set them (shown in `spectune tune --help`). */
export const DEFAULT_BENCH_TIMEOUTS = {
  ready: '20m',
  connect: '10s',
  firstToken: '120s',
  stall: '60s',
  total: '10m',
} as const;

const quantity = z.union([z.number(), z.string()]);

/** One machine (and its unit) that serves the model; a model may span two hosts (rank0, rank1). */
export const hostSchema = z.strictObject({
  /** SSH destination "user@host" (or "host"); omitted = this machine. */
  host: z
    .string()
    .regex(HOST_SPEC, 'expected "user@host"')
    .optional()
    .describe('SSH destination "user@host"; omit for this machine'),
  /** The systemd unit (or process-manager service) name. */
  unit: z.string().min(1).describe('systemd unit name, e.g. "sglang-qwen.service"'),
  /** Rank of this host in a multi-node deployment; rank0 serves the endpoint. */
  role: z.enum(['rank0', 'rank1']).optional().describe('rank in a multi-node model; rank0 serves HTTP'),
});

/** What is being tuned and how spectune reaches it. */
/** A command as an argv array (never a shell string): run on this machine, not on the host. */
const argvSchema = z.array(z.string().min(1)).min(1);

/** Commands around each restart spectune makes (the load balancer's drain: out before the stop, back in after the ready). */
export const hooksSchema = z.strictObject({
  preStop: z
    .array(argvSchema)
    .optional()
    .describe(
      'argv arrays run in order on this machine before each stop spectune makes, e.g. [[lb-ctl, drain, host1]]',
    ),
  postReady: z
    .array(argvSchema)
    .optional()
    .describe(
      'argv arrays run in order on this machine once the restarted engine is ready, e.g. [[lb-ctl, enable, host1]]',
    ),
  timeout: quantity.default('60s').describe('time limit of each hook command, e.g. "60s"'),
});

export const targetSchema = z.strictObject({
  /** The hosts and units that serve the model (one, or two for a model split across nodes). */
  hosts: z.array(hostSchema).min(1).max(2).describe('hosts and units serving the model'),
  /** Inference engine; selects the setting names, log dialect and diagnosis rules. */
  engine: z.enum(ENGINE_NAMES as [EngineName, ...EngineName[]]).describe('inference engine'),
  /** OpenAI-compatible base URL of the service. */
  endpoint: z.url().describe('base URL, e.g. http://10.1.230.174:30000'),
  /** API key (prefer apiKeyEnv: keys in files end up in backups). */
  apiKey: z.string().optional().describe('API key (prefer apiKeyEnv)'),
  /** Name of the environment variable holding the API key. */
  apiKeyEnv: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
    .optional()
    .describe('environment variable with the API key'),
  /** Service manager: systemd, or spectune's local process manager (used by `spectune demo`). */
  manager: z
    .enum(['systemd', 'process', 'slurm'])
    .default('systemd')
    .describe('systemd, the local process manager, or slurm (trials as jobs)'),
  /** manager: process only: the manager's root (holds etc/systemd/system/<unit>, written by the operator, and the
   *  manager's state), relative to the config file; default "./spectune-procman". */
  processDir: z
    .string()
    .min(1)
    .optional()
    .describe('process manager root with etc/systemd/system/<unit> (manager: process)'),
  /** GPU memory per rank, e.g. "96GiB"; helps the feasibility predictor before any capacity line is known. */
  gpuMemory: quantity.optional().describe('GPU memory per rank, e.g. "96GiB"'),
  /** systemd only: how long a candidate may run unconfirmed before the host itself restores known-good (the
   *  commit-confirmed lease; spectune renews it while it lives), e.g. "5m"; 0 turns it off. */
  lease: quantity
    .default('5m')
    .describe(
      'commit-confirmed lease of a candidate: the host restores known-good unless spectune renews it, e.g. "5m"; 0 = off',
    ),
  /** systemd: how long a restart waits for the engine's in-flight requests before it stops anyway, e.g. "10m"; 0 = no wait. */
  drainTimeout: quantity
    .default('10m')
    .describe(
      'how long a restart waits for in-flight requests to finish before stopping anyway, e.g. "10m"; 0 = no wait',
    ),
  /** systemd: commands run on this machine around each restart spectune makes (e.g. take the host out of the load balancer). */
  hooks: hooksSchema
    .optional()
    .describe('commands run on this machine before each stop (preStop) and after each ready (postReady)'),
  /** manager: slurm only: how each trial becomes a job. */
  slurm: slurmSchema.optional().describe('manager: slurm: trials as Slurm jobs'),
});

/** The values one setting may take: an explicit list or a numeric range. */
export const dimensionSchema = z.union([
  z.strictObject({
    /** Every value to consider (numbers are searched in ascending order; other values in the order given). */
    values: z.array(settingValue).min(1).describe('values to consider (numbers are searched in ascending order)'),
  }),
  z.strictObject({
    /** Smallest value. */
    min: z.number().describe('smallest value'),
    /** Largest value. */
    max: z.number().describe('largest value'),
    /** Increment between values (default 1). */
    step: z.number().positive().default(1).describe('increment (default 1)'),
  }),
]);

/** How candidates are chosen and compared. */
export const searchSchema = z.strictObject({
  /** adaptive (climb, plateau, probe, bisect; fewest restarts), grid (every combination) or random. */
  strategy: z.enum(['adaptive', 'grid', 'random']).default('adaptive').describe('search strategy'),
  /** Relative gain a candidate must show to count as better, e.g. 0.03 or "3%". */
  noiseMargin: quantity.default(0.03).describe('relative gain that counts as better, e.g. 0.03 or "3%"'),
  /** Maximum measurements of one config when two candidates are within the noise margin. */
  repeats: z.number().int().min(1).max(10).default(2).describe('measurements per config on near-ties'),
  /** Stability soak of the winner before it is accepted. */
  soak: z
    .strictObject({
      /** How many times the winner is benchmarked again (0 disables the soak). */
      repeats: z.number().int().min(0).max(10).default(1).describe('extra runs of the winner (0 = no soak)'),
      /** Minimum time under load, e.g. "10m". */
      duration: quantity.optional().describe('minimum time under load, e.g. "10m"'),
    })
    .default({ repeats: 1 })
    .describe('stability soak of the winner'),
  /** Seed of the random strategy (same seed, same trials). */
  seed: z.number().int().default(1).describe('seed of the random strategy'),
});

/** The number to optimise. */
export const objectiveSchema = z.strictObject({
  /** Metric of the benchmark level, e.g. "decodeTokensPerSec.p50" (per-request decode speed). */
  metric: z.enum(METRICS).default('decodeTokensPerSec.p50').describe('metric to optimise'),
  /** Concurrency level at which the metric is read. */
  concurrency: z.number().int().positive().default(1).describe('concurrency level of the metric'),
  /** maximize for throughputs; minimize for latencies (default follows the metric). */
  goal: z.enum(['maximize', 'minimize']).optional().describe('maximize or minimize (default from the metric)'),
});

/** A condition every accepted config must meet. */
export const constraintSchema = z.strictObject({
  /** Metric to check. */
  metric: z.enum(METRICS).describe('metric to check'),
  /** Concurrency level (default: the objective's). */
  concurrency: z.number().int().positive().optional().describe("concurrency level (default: the objective's)"),
  /** Comparison. */
  op: z.enum(['>=', '<=']).describe('comparison'),
  /** Threshold: a number, or a percentage of the baseline such as "90%". */
  value: quantity.describe('number, or "90%" of the baseline'),
  /** What a percentage is relative to. */
  relativeTo: z.enum(['baseline']).optional().describe('reference for a percentage'),
});

/** The load each trial is measured with. */
export const benchmarkSchema = z.strictObject({
  /** Concurrency levels, run in order. */
  concurrency: z.array(z.number().int().positive()).min(1).default([1, 16]).describe('concurrency levels'),
  /** Requests per level. */
  requests: z
    .union([z.number().int().positive(), z.array(z.number().int().positive()).min(1)])
    .default(32)
    .describe('requests per level, or one count per concurrency level, e.g. [8, 16, 32, 64]'),
  /** Prompt length in tokens. */
  inputTokens: z.number().int().positive().default(512).describe('prompt tokens'),
  /** Generated tokens per request. */
  outputTokens: z.number().int().positive().default(256).describe('output tokens'),
  /** Warm-up requests after each restart (not measured; the first run after a restart is cold). */
  warmup: z.number().int().min(0).default(2).describe('warm-up requests (discarded)'),
  /** Timeouts by phase, e.g. "10s", "15m". */
  timeouts: z
    .strictObject({
      /** Model load until the health check answers. */
      ready: quantity.default(DEFAULT_BENCH_TIMEOUTS.ready).describe('time for the service to become ready'),
      /** Connection to the endpoint. */
      connect: quantity.default(DEFAULT_BENCH_TIMEOUTS.connect).describe('connect timeout'),
      /** First token of a request. */
      firstToken: quantity.default(DEFAULT_BENCH_TIMEOUTS.firstToken).describe('first-token timeout'),
      /** Gap between two tokens. */
      stall: quantity.default(DEFAULT_BENCH_TIMEOUTS.stall).describe('inter-token stall timeout'),
      /** One whole request. */
      total: quantity.default(DEFAULT_BENCH_TIMEOUTS.total).describe('per-request timeout'),
    })
    .default({ ...DEFAULT_BENCH_TIMEOUTS })
    .describe('timeouts by phase'),
});

/** When the campaign stops. */
export const budgetSchema = z.strictObject({
  /** Maximum trials (each usually costs a restart). */
  trials: z.number().int().positive().default(20).describe('maximum trials'),
  /** Maximum running time of the campaign (interrupted time is not counted), e.g. 4 or "4h" or "90m". */
  hours: quantity.optional().describe('maximum running time, interruptions not counted, e.g. "4h"'),
});

/** The whole spectune.yaml. */
export const configSchema = z.strictObject({
  /** Schema URL for editors (ignored). */
  $schema: z.string().optional(),
  target: targetSchema,
  /** Canonical engine setting key → values to search, e.g. speculative_num_steps: {min: 1, max: 10}. */
  space: z.record(z.string(), dimensionSchema).describe('setting key → values or range'),
  search: searchSchema.default({ strategy: 'adaptive', noiseMargin: 0.03, repeats: 2, soak: { repeats: 1 }, seed: 1 }),
  objective: objectiveSchema.default({ metric: 'decodeTokensPerSec.p50', concurrency: 1 }),
  /** Conditions every accepted config must meet. */
  constraints: z.array(constraintSchema).default([]).describe('conditions on accepted configs'),
  benchmark: benchmarkSchema.default({
    concurrency: [1, 16],
    requests: 32,
    inputTokens: 512,
    outputTokens: 256,
    warmup: 2,
    timeouts: { ...DEFAULT_BENCH_TIMEOUTS },
  }),
  budget: budgetSchema.default({ trials: 20 }),
  /** SQLite file holding campaigns (default ./spectune.db). */
  store: z.string().default('./spectune.db').describe('SQLite file (default ./spectune.db)'),
});

/** The config as written (after defaults, before unit normalisation). */
export type RawConfig = z.output<typeof configSchema>;
