// The campaign's domain: trials, their outcomes and what the runner decides next. Pure data, no I/O.
import type { BenchRun } from '../bench/types.js';
import type { Verdict } from '../diagnose/index.js';
import type { CapacityFacts, ParamValue } from '../engines/types.js';

/** One candidate configuration, keyed by canonical setting names (speculative_num_steps, ...). */
export type TuneConfig = Record<string, ParamValue>;

/** Why a trial exists. */
export type TrialKind = 'baseline' | 'search' | 'soak';

/** Where a trial ended. `discarded` = was in flight when spectune died; redone on resume. */
export type TrialStatus = 'running' | 'ok' | 'failed' | 'infeasible' | 'discarded';

/** The memory predictor's opinion of a config before it costs a restart. */
export interface FeasibilityPrediction {
  feasible: boolean;
  /** Human reason, e.g. "needs 21.3 GB for KV + graphs, 18.0 GB available". */
  reason: string;
  /** The change that would make it fit, e.g. "cuda_graph_max_bs=8". */
  suggestion: string | null;
}

/** What a campaign's restart figure counts, said next to it in the tune summary and the report (one definition). */
export const RESTARTS_COUNTED = "spectune's deploys, rollbacks and final deploy; systemd's own restarts not counted";

// The trial number people see (progress, summary, report, store seq): 1-based, where `index` is 0-based.
export function trialNumber(index: number): number {
  return index + 1;
}

/** One measured (or refused) configuration. */
export interface TrialRecord {
  /** 0-based, in order of start; never reused. */
  index: number;
  kind: TrialKind;
  config: TuneConfig;
  status: TrialStatus;
  /** Why the search chose it ("baseline", "climb", "probe beyond plateau", "bisect", "soak of trial 4"). */
  reason: string;
  objective: number | null;
  /** All constraints held (null when not measured). */
  constraintsOk: boolean | null;
  violations: string[];
  runs: BenchRun[];
  verdict: Verdict | null;
  prediction: FeasibilityPrediction | null;
  /** Capacity facts the engine logged at start-up (the predictor learns from them). */
  capacity: CapacityFacts | null;
  /** Restarts of the service this trial cost (0 for baseline / infeasible). */
  restarts: number;
  startedAt: number;
  endedAt: number | null;
}

/** Objective and constraints are the config's own shapes (metric names like "decodeTokensPerSec.p50"). */
export type { Constraint as ConstraintSpec, Objective as ObjectiveSpec } from '../config/types.js';
/** A metric name the objective and constraints can read from a BenchRun. */
export type { MetricName as BenchMetric } from '../config/schema.js';

/** Limits of a campaign. */
export interface TuneBudget {
  maxTrials: number;
  maxHours: number;
}

/** What the runner does next (the pure decision; app/ performs it). A finish's winnerNote says why a config that
 *  measured lower won (tied within noise, safer), null when the top config won. */
export type NextStep =
  | { kind: 'baseline' }
  | { kind: 'trial'; config: TuneConfig; reason: string; confirmProbe: boolean }
  | { kind: 'soak'; config: TuneConfig; of: number }
  | { kind: 'finish'; best: TrialRecord | null; why: string; winnerNote: string | null };
