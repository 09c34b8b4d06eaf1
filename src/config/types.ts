// The normalised config every other module consumes: units resolved, ranges expanded, defaults applied.
import type { EngineName, ParamValue } from '../engines/types.js';
import type { MetricName } from './schema.js';
import type { SlurmTargetConfig } from './schema-slurm.js';

/** One host serving the model; `host` null = this machine. */
export interface TargetHost {
  host: string | null;
  unit: string;
  role: 'rank0' | 'rank1';
}

/** One setting to search, with its values (numbers are searched in ascending order). */
export interface Dimension {
  /** Canonical engine setting key, e.g. "speculative_num_steps". */
  key: string;
  values: ParamValue[];
}

/** The objective: one metric at one concurrency, maximised or minimised. */
export interface Objective {
  metric: MetricName;
  concurrency: number;
  goal: 'maximize' | 'minimize';
}

/** A constraint with its threshold resolved: `relative` means value is a ratio of the baseline's metric. */
export interface Constraint {
  metric: MetricName;
  concurrency: number;
  op: '>=' | '<=';
  value: number;
  relative: boolean;
}

/** Benchmark timeouts by phase, in milliseconds. */
export interface Timeouts {
  readyMs: number;
  connectMs: number;
  firstTokenMs: number;
  stallMs: number;
  totalMs: number;
}

/** The validated, normalised spectune config. */
export interface SpectuneConfig {
  target: {
    hosts: TargetHost[];
    engine: EngineName;
    endpoint: string;
    apiKey: string | null;
    apiKeyEnv: string | null;
    manager: 'systemd' | 'process' | 'slurm';
    /** manager: process: the manager's root directory (as written; resolved against the config's directory). */
    processDir: string;
    gpuMemoryBytes: number | null;
    /** Commit-confirmed lease of a candidate (ms; 0 = off). */
    leaseMs: number;
    /** How long a restart waits for in-flight requests before it stops anyway (ms; 0 = no wait). */
    drainTimeoutMs: number;
    /** Commands run on this machine before each stop and after each ready (argv arrays), with a time limit each. */
    hooks: { preStop: string[][]; postReady: string[][]; timeoutMs: number };
    /** manager: slurm: the trial jobs (null otherwise). */
    slurm: SlurmTargetConfig | null;
  };
  space: Dimension[];
  search: {
    strategy: 'adaptive' | 'grid' | 'random';
    noiseMargin: number;
    repeats: number;
    soak: { repeats: number; durationMs: number | null };
    seed: number;
  };
  objective: Objective;
  constraints: Constraint[];
  benchmark: {
    concurrency: number[];
    /** Requests per level (the largest of requestsPerLevel when that is set). */
    requests: number;
    /** One request count per concurrency level, in the same order; null = `requests` at every level. */
    requestsPerLevel: number[] | null;
    inputTokens: number;
    outputTokens: number;
    warmup: number;
    timeouts: Timeouts;
  };
  budget: { trials: number; hours: number | null };
  store: string;
}

/** Problems found while validating; errors make the config unusable, warnings do not. */
export interface Problems {
  errors: string[];
  warnings: string[];
}
