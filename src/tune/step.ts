// The campaign state machine: given what happened so far, decide the next step. Pure (time comes in as a number).
import { collectCandidates, configKey, findBest, type Candidate, type WinnerRule } from './best.js';
import type { NextStep, ObjectiveSpec, TrialRecord, TuneBudget, TuneConfig } from './types.js';

/** A soak may fall this far below the candidate's earlier measurement and still pass: the seeds' run-to-run noise is ~2%. */
export const SOAK_TOLERANCE = 0.05;
/** Milliseconds in an hour, for the hours budget. */
const MS_PER_HOUR = 3_600_000;

/** What the search proposes: a config and why, or null when it is done. */
export interface Proposal {
  config: TuneConfig;
  reason: string;
  /** The predictor says infeasible but the search wants one confirming probe anyway. */
  confirmProbe?: boolean;
}

/** Everything decideNextStep needs. */
export interface StepInputs {
  trials: TrialRecord[];
  budget: TuneBudget;
  /** Time the tuner has been running on this campaign (interruptions excluded), for the hours budget. */
  elapsedMs: number;
  objective: ObjectiveSpec;
  /** The search's noise margin: configs closer than this are tied and the safer one wins. */
  noiseMargin: number;
  /** The pure search, closed over its space and budget. */
  propose: (history: TrialRecord[]) => Proposal | null;
}

// Trials that count for decisions: in-flight/discarded ones are ignored (they are redone).
export function settledTrials(trials: TrialRecord[]): TrialRecord[] {
  return trials.filter((t) => t.status !== 'running' && t.status !== 'discarded');
}

// Whether the search budget is spent (infeasible predictions cost no restart and do not count).
export function isBudgetSpent(inputs: Pick<StepInputs, 'trials' | 'budget' | 'elapsedMs'>): boolean {
  const used = settledTrials(inputs.trials).filter((t) => t.kind === 'search' && t.status !== 'infeasible').length;
  return used >= inputs.budget.maxTrials || inputs.elapsedMs >= inputs.budget.maxHours * MS_PER_HOUR;
}

// Whether a soak confirmed its candidate: healthy, constraints held, objective within tolerance.
export function isSoakPassed(soak: TrialRecord, candidate: Candidate, goal: ObjectiveSpec['goal']): boolean {
  if (soak.status !== 'ok' || soak.constraintsOk !== true || soak.objective === null) return false;
  const ratio = soak.objective / candidate.objective;
  return goal === 'maximize' ? ratio >= 1 - SOAK_TOLERANCE : ratio <= 1 + SOAK_TOLERANCE;
}

// Configs whose soak failed: they never win.
export function findDisqualified(trials: TrialRecord[], goal: ObjectiveSpec['goal']): Set<string> {
  const out = new Set<string>();
  for (const soak of trials.filter((t) => t.kind === 'soak')) {
    const [cand] = collectCandidates(trials.filter((t) => configKey(t.config) === configKey(soak.config)));
    if (!cand || !isSoakPassed(soak, cand, goal)) out.add(configKey(soak.config));
  }
  return out;
}

// After the search: soak the winner (the search's tie rule) unless soaked, or finish on a soaked (or baseline) one.
function decideEndgame(trials: TrialRecord[], rule: WinnerRule, why: string): NextStep {
  const best = findBest(trials, rule, findDisqualified(trials, rule.goal));
  if (!best) return { kind: 'finish', best: null, why: `${why}; no usable measurement`, winnerNote: null };
  const last = best.trials[best.trials.length - 1];
  const soaked = trials.some((t) => t.kind === 'soak' && configKey(t.config) === best.key);
  if (soaked || last.kind === 'baseline') return { kind: 'finish', best: last, why, winnerNote: best.why ?? null };
  return { kind: 'soak', config: best.config, of: last.index };
}

// The next step of the campaign.
export function decideNextStep(inputs: StepInputs): NextStep {
  const trials = settledTrials(inputs.trials);
  const rule = { goal: inputs.objective.goal, noiseMargin: inputs.noiseMargin };
  if (!trials.some((t) => t.kind === 'baseline')) return { kind: 'baseline' };
  if (trials.some((t) => t.kind === 'soak')) return decideEndgame(trials, rule, 'search finished');
  if (isBudgetSpent(inputs)) return decideEndgame(trials, rule, 'budget spent');
  const next = inputs.propose(trials);
  if (!next) return decideEndgame(trials, rule, 'search converged');
  return { kind: 'trial', config: next.config, reason: next.reason, confirmProbe: next.confirmProbe === true };
}

// On resume: a trial still marked running was interrupted; it is discarded and will be redone.
export function reconcileTrials(trials: TrialRecord[]): { trials: TrialRecord[]; interrupted: TrialRecord[] } {
  const interrupted = trials.filter((t) => t.status === 'running');
  return {
    trials: trials.map((t) => (t.status === 'running' ? { ...t, status: 'discarded' as const } : t)),
    interrupted,
  };
}
