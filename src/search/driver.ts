// Drive a search against an oracle (a simulated service) and count restarts: used by the tests and by
// bench/search-vs-grid.mjs. Pure: the oracle is a function, nothing is deployed.
import type { CapacityFacts } from '../engines/types.js';
import { configKey } from './history.js';
import { propose } from './strategy.js';
import type { HistoryEntry, Params, Purpose, SearchBudget, SearchOptions, SearchSpace } from './types.js';
import type { FeasibilityPrediction } from './feasibility.js';

/** What measuring one config yields. */
export interface OracleResult {
  status: 'ok' | 'failed';
  objective: number | null;
  constraintsOk?: boolean;
  capacity?: CapacityFacts | null;
  verdict?: { class: string; cause?: string | null } | null;
}

/** A simulated service: measure config p (n = how many trials came before, for seeded noise). */
export type Oracle = (p: Params, n: number) => OracleResult;

/** One driven trial with what it cost. */
export interface DrivenTrial extends HistoryEntry {
  purpose: Purpose;
  reason: string;
  restarts: number;
  prediction: FeasibilityPrediction | null;
}

/** The outcome of a driven campaign. */
export interface DriveResult {
  trials: DrivenTrial[];
  best: Params | null;
  reason: string;
  /** Service restarts: one per config change, one per rollback after a failure, one to land on the winner. */
  restarts: number;
}

// A campaign never needs more proposals than this; more means the strategy loops (a bug).
const MAX_PROPOSALS = 500;

const kindOf = (p: Purpose) => (p === 'baseline' ? 'baseline' : p === 'soak' ? 'soak' : 'search');

// Run propose() to completion against the oracle, with an optional feasibility predictor in front of each deploy.
export function driveSearch(
  oracle: Oracle,
  space: SearchSpace,
  budget: SearchBudget,
  opts: SearchOptions,
  predict?: (history: readonly HistoryEntry[], p: Params) => FeasibilityPrediction | null,
): DriveResult {
  const trials: DrivenTrial[] = [];
  let deployed = configKey(opts.baseline);
  let lastGood = deployed;
  for (let i = 0; i < MAX_PROPOSALS; i++) {
    const next = propose(trials, space, budget, opts);
    if (next.done) {
      const land = next.best && configKey(next.best) !== deployed ? 1 : 0;
      return {
        trials,
        best: next.best,
        reason: next.reason,
        restarts: trials.reduce((s, t) => s + t.restarts, 0) + land,
      };
    }
    const base = { config: next.params, kind: kindOf(next.purpose), purpose: next.purpose, reason: next.reason };
    const prediction = predict ? predict(trials, next.params) : null;
    if (prediction && !prediction.feasible && !next.confirmProbe) {
      trials.push({ ...base, status: 'infeasible', objective: null, restarts: 0, prediction });
      continue;
    }
    const key = configKey(next.params);
    let restarts = key === deployed ? 0 : 1;
    const r = oracle(next.params, trials.length);
    deployed = key;
    if (r.status === 'ok') lastGood = key;
    else {
      restarts += 1;
      deployed = lastGood;
    }
    trials.push({ ...base, ...r, restarts, prediction });
  }
  throw new Error(`search did not finish within ${MAX_PROPOSALS} proposals`);
}
