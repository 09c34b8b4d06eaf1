// Binds the runner's search port to src/search (propose over the campaign history, the memory predictor).
import type { SpectuneConfig } from '../config/index.js';
import type { TuneSearchPort } from './tune-ports.js';

type AnyFn = (...args: unknown[]) => unknown;

// The search port for a config's space, strategy and budget.
export async function loadSearchPort(cfg: SpectuneConfig): Promise<TuneSearchPort> {
  const path = '../search/index.js'; // a static import once src/search has landed
  const search = (await import(path)) as Record<string, AnyFn>;
  return {
    propose: (history) => search.propose(history, cfg.space, cfg.budget) as ReturnType<TuneSearchPort['propose']>,
    predict: (history, config) => (search.predictFeasibility ? search.predictFeasibility(history, config) as ReturnType<TuneSearchPort['predict']> : null),
  };
}
