// Binds the runner's search port to src/search: propose(history, space, budget, options) and the memory predictor.
import type { SpectuneConfig } from '../config/index.js';
import type { Proposal } from '../tune/step.js';
import type { TrialRecord } from '../tune/types.js';
import { predictFeasibility, propose, type Proposal as SearchAnswer, type SearchOptions } from '../search/index.js';
import type { TuneSearchPort } from './tune-ports.js';

/** The search counts the baseline as a spent trial; the config's budget counts search trials only. */
const BASELINE_TRIALS = 1;

/** Options the campaign adds on top of the config's search section. */
export interface SearchPortOptions {
  /** Deploy a probe even when the predictor refuses it (the demo meets the failure on purpose). */
  confirmProbes?: boolean;
}

// Map the search's answer to the runner's proposal (null = done).
export function toProposal(a: SearchAnswer): Proposal | null {
  return a.done ? null : { config: a.params, reason: `${a.purpose}: ${a.reason}`, confirmProbe: a.confirmProbe };
}

// The search options for a config; the baseline values come from the measured baseline trial.
function searchOptions(cfg: SpectuneConfig, history: readonly TrialRecord[], o: SearchPortOptions): SearchOptions {
  const baseline = history.find((t) => t.kind === 'baseline')?.config ?? {};
  return {
    strategy: cfg.search.strategy,
    goal: cfg.objective.goal,
    noiseMargin: cfg.search.noiseMargin,
    repeats: cfg.search.repeats,
    soakRepeats: 0,
    baseline,
    seed: cfg.search.seed,
    confirmProbes: o.confirmProbes === true,
  };
}

// The search port for a config's space, strategy and budget.
export function createSearchPort(cfg: SpectuneConfig, o: SearchPortOptions = {}): TuneSearchPort {
  const budget = { trials: cfg.budget.trials + BASELINE_TRIALS };
  return {
    propose: (history) => toProposal(propose(history, cfg.space, budget, searchOptions(cfg, history, o))),
    predict: (history, config) =>
      predictFeasibility(history, config, {
        defaults: history.find((t) => t.kind === 'baseline')?.config,
        space: cfg.space,
      }) ?? null,
  };
}
