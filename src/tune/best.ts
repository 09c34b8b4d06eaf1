// Which measured config is best: trials of the same config are pooled, so a repeat measurement counts once.
import { isBetter } from './objective.js';
import type { ObjectiveSpec, TrialRecord, TuneConfig } from './types.js';

// A stable key for a config (sorted keys), so {a,b} and {b,a} are the same candidate.
export function configKey(config: TuneConfig): string {
  return JSON.stringify(Object.keys(config).sort().map((k) => [k, config[k]]));
}

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
}

// Pool the usable trials by config (mean objective), excluding disqualified configs.
export function collectCandidates(trials: TrialRecord[], disqualified: ReadonlySet<string> = new Set()): Candidate[] {
  const byKey = new Map<string, TrialRecord[]>();
  for (const t of trials.filter(isUsable)) {
    const k = configKey(t.config);
    if (!disqualified.has(k)) byKey.set(k, [...(byKey.get(k) ?? []), t]);
  }
  return [...byKey.entries()].map(([key, ts]) => ({
    key, config: ts[0].config, trials: ts,
    objective: ts.reduce((s, t) => s + (t.objective ?? 0), 0) / ts.length,
  }));
}

// The best candidate under the objective, or null when nothing usable was measured.
export function findBest(trials: TrialRecord[], goal: ObjectiveSpec['goal'], disqualified?: ReadonlySet<string>): Candidate | null {
  let best: Candidate | null = null;
  for (const c of collectCandidates(trials, disqualified)) if (!best || isBetter(c.objective, best.objective, goal)) best = c;
  return best;
}
