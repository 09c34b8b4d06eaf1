// Shared types of the search: what it reads (history, space, budget) and what it answers (next trial or done).
import type { CapacityFacts, ParamValue } from '../engines/types.js';
import type { Dimension } from '../config/types.js';

/** One candidate configuration, keyed by canonical setting names. */
export type Params = Record<string, ParamValue>;

/** The search space: ordered dimensions (config's normalised `space`). */
export type SearchSpace = Dimension[];

/**
 * One past trial as the search sees it. Structurally compatible with the tuner's TrialRecord:
 * status "ok"/"measured" = measured, "failed" = the service did not come up or died, "infeasible" = refused before
 * deploying (predicted OOM); anything else (running, discarded, skipped) is ignored.
 */
export interface HistoryEntry {
  config: Params;
  status: string;
  /** The objective value, or null when not measured. */
  objective: number | null;
  /** False when a constraint was violated (the config is then unusable, like a failure but without a crash). */
  constraintsOk?: boolean | null;
  /** "baseline", "search" or "soak"; soak runs never steer the search. */
  kind?: string;
  /** Capacity facts the engine logged at start-up (the feasibility predictor learns from them). */
  capacity?: CapacityFacts | null;
  /** The diagnosis of a failed trial (the feasibility predictor only learns from memory failures). */
  verdict?: { class: string; cause?: string | null } | null;
}

/** How many trials the search may still ask for. */
export interface SearchBudget {
  /** Maximum counted trials (measured or failed; refused-before-deploy ones do not count). */
  trials: number;
}

/** Why a trial is proposed. */
export type Purpose = 'baseline' | 'climb' | 'refine' | 'probe' | 'bisect' | 'repeat' | 'soak' | 'grid' | 'random';

/** Knobs of the search. */
export interface SearchOptions {
  strategy: 'adaptive' | 'grid' | 'random';
  goal: 'maximize' | 'minimize';
  /** Relative gain a candidate must show to count as better (0.03 = 3%). */
  noiseMargin: number;
  /** Maximum measurements of one config when it is within the noise margin of the incumbent. */
  repeats: number;
  /** Extra runs of the winner before it is accepted (0 = the caller soaks, or no soak). */
  soakRepeats: number;
  /** The config in force before the campaign (values for every space key). */
  baseline: Params;
  /** Seed of the random strategy. */
  seed?: number;
  /** Ask the caller to deploy a probe even when the feasibility predictor refuses it (demo: meet the failure). */
  confirmProbes?: boolean;
}

/** The answer of propose(). */
export type Proposal =
  | { done: false; params: Params; reason: string; purpose: Purpose; confirmProbe: boolean }
  | { done: true; reason: string; best: Params | null };
