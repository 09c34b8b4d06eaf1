// The search entry point: given the history, propose the next trial or say done (with the winner). Pure.
import { countSpent, NeedTrial, observe, Replay } from './history.js';
import { proposeAdaptive } from './strategies/adaptive.js';
import { proposeGrid, proposeRandom } from './strategies/grid.js';
import type { HistoryEntry, Proposal, SearchBudget, SearchOptions, SearchSpace } from './types.js';
import { pickBest, tieRuleOf } from './winner.js';

// Run the adaptive replay: the first missing measurement is the proposal.
function runAdaptive(history: readonly HistoryEntry[], space: SearchSpace, opts: SearchOptions): Proposal {
  const ctx = new Replay(observe(history));
  try {
    return proposeAdaptive(history, space, opts, ctx);
  } catch (e) {
    if (e instanceof NeedTrial) return e.proposal;
    throw e;
  }
}

// Next trial for the configured strategy; done when the strategy converges or the budget is spent.
export function propose(
  history: readonly HistoryEntry[],
  space: SearchSpace,
  budget: SearchBudget,
  opts: SearchOptions,
): Proposal {
  const obs = observe(history);
  if (countSpent(history) >= budget.trials) {
    return {
      done: true,
      reason: `budget of ${budget.trials} trials spent`,
      best: pickBest(obs, history, opts.goal, new Set(), tieRuleOf(opts)),
    };
  }
  if (opts.strategy === 'adaptive') return runAdaptive(history, space, opts);
  const next = opts.strategy === 'grid' ? proposeGrid(space, opts, obs) : proposeRandom(space, opts, obs);
  return next.done ? { ...next, best: pickBest(obs, history, opts.goal, new Set(), tieRuleOf(opts)) } : next;
}
