// Public surface of the search: propose/compare (pure), the feasibility predictor, and the driver used by benchmarks.
export { propose } from './strategy.js';
export {
  compare,
  median,
  needsRepeat,
  candidateTimeoutMs,
  CANDIDATE_TIMEOUT_FACTOR,
  type Comparison,
} from './compare.js';
export { configKey, observe, countSpent, type Observation } from './history.js';
export { chooseWinner, findWinner, pickBest, tieRuleOf, type TieRule, type Winner } from './winner.js';
export { gridPoint, gridSize, mulberry32 } from './strategies/grid.js';
export {
  predictFeasibility,
  checkPrediction,
  draftTokensOf,
  graphLoadOf,
  fitLine,
  MIN_TOKEN_FRACTION,
  type FeasibilityPrediction,
  type FeasibilityOptions,
} from './feasibility.js';
export { driveSearch, type Oracle, type OracleResult, type DriveResult, type DrivenTrial } from './driver.js';
export type { HistoryEntry, Params, Proposal, Purpose, SearchBudget, SearchOptions, SearchSpace } from './types.js';
