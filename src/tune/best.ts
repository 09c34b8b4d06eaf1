// Which measured config is best: trials of the same config are pooled, so a repeat measurement counts once.
import { configKey, findWinner } from '../search/index.js';
import type { ObjectiveSpec, TrialRecord, TuneConfig } from './types.js';

// A stable key for a config (sorted keys): the search's own, so the tuner's candidates match its winner.
export { configKey };

// Whether a trial counts as a valid measurement of its config.
export function isUsable(t: TrialRecord): boolean {
  return t.kind !== 'soak' && t.status === 'ok' && t.constraintsOk === true && t.objective !== null;
}

/** A candidate config with its pooled objective. */
export interface Candidate {
  key: string;
  config: TuneConfig;
  objective: number;
  trials: TrialRecord[];
  /** Why it won although another config measured higher ("tied within noise ..., safer"), else null. */
  why?: string | null;
}

/** How the winner is chosen: the objective's goal and the search's noise margin (ties go to the safer config). */
export interface WinnerRule {
  goal: ObjectiveSpec['goal'];
  /** Relative difference below which two configs are tied (the search's noiseMargin). */
  noiseMargin: number;
}

// Pool the usable trials by config (mean objective), excluding disqualified configs.
export function collectCandidates(trials: TrialRecord[], disqualified: ReadonlySet<string> = new Set()): Candidate[] {
  const byKey = new Map<string, TrialRecord[]>();
  for (const t of trials.filter(isUsable)) {
    const k = configKey(t.config);
    if (!disqualified.has(k)) byKey.set(k, [...(byKey.get(k) ?? []), t]);
  }
  return [...byKey.entries()].map(([key, ts]) => ({
    key,
    config: ts[0].config,
    trials: ts,
    objective: ts.reduce((s, t) => s + (t.objective ?? 0), 0) / ts.length,
  }));
}

// The winner under the search's own rule (src/search findWinner: best median, a tie within the noise margin goes to
// the config nearer the baseline), so the service is left where the search would: null when nothing usable was measured.
export function findBest(
  trials: TrialRecord[],
  rule: WinnerRule,
  disqualified: ReadonlySet<string> = new Set(),
): Candidate | null {
  const baseline = trials.find((t) => t.kind === 'baseline')?.config ?? {};
  const w = findWinner(trials, { goal: rule.goal, noiseMargin: rule.noiseMargin, baseline }, disqualified);
  const c = w && collectCandidates(trials, disqualified).find((x) => x.key === configKey(w.params));
  return c ? { ...c, why: w.why } : null;
}
