// What the history says about each config, and the replay that lets a sequential algorithm stay a pure function:
// the algorithm asks for measurements in order; the first one the history lacks becomes the next proposal.
import type { HistoryEntry, Params, Proposal, Purpose } from './types.js';

/** What is known about one config. */
export interface Observation {
  /** ok = measured and usable; failed = did not start or died (or was refused as infeasible); violates = a constraint failed. */
  outcome: 'ok' | 'failed' | 'violates';
  /** Objective values of its measurements (search runs only, not soaks). */
  values: number[];
  /** It was refused before deploying (predicted OOM), not seen failing. */
  predictedOnly: boolean;
}

const MEASURED = new Set(['ok', 'measured']);

// A stable key for a config (sorted keys), so {a,b} and {b,a} are the same candidate.
export function configKey(p: Params): string {
  return JSON.stringify(
    Object.keys(p)
      .sort()
      .map((k) => [k, p[k]]),
  );
}

// Fold the history into one observation per config; a failure anywhere makes the config failed.
export function observe(history: readonly HistoryEntry[], includeSoak = false): Map<string, Observation> {
  const out = new Map<string, Observation>();
  for (const h of history) {
    if (h.kind === 'soak' && !includeSoak) continue;
    const measured = MEASURED.has(h.status) && h.objective !== null;
    if (!measured && h.status !== 'failed' && h.status !== 'infeasible') continue;
    const k = configKey(h.config);
    const o = out.get(k) ?? { outcome: 'ok' as const, values: [], predictedOnly: h.status === 'infeasible' };
    if (h.status === 'failed' || h.status === 'infeasible') o.outcome = 'failed';
    else if (h.constraintsOk === false && o.outcome === 'ok') o.outcome = 'violates';
    if (h.status !== 'infeasible') o.predictedOnly = false;
    if (measured) o.values.push(h.objective as number);
    out.set(k, o);
  }
  return out;
}

// Count trials that spent budget (measured or failed; refused-before-deploy ones are free).
export function countSpent(history: readonly HistoryEntry[]): number {
  return history.filter((h) => MEASURED.has(h.status) || h.status === 'failed').length;
}

/** Thrown inside a strategy when it needs a measurement the history does not have yet. */
export class NeedTrial {
  constructor(readonly proposal: Extract<Proposal, { done: false }>) {}
}

/** Replays a strategy against the history. */
export class Replay {
  constructor(readonly obs: Map<string, Observation>) {}

  // The observation of p with at least `count` measurements, or throw the proposal to measure it.
  measure(p: Params, purpose: Purpose, reason: string, count = 1, confirmProbe = false): Observation {
    const o = this.obs.get(configKey(p));
    if (o && (o.outcome === 'failed' || o.values.length >= count)) return o;
    throw new NeedTrial({ done: false, params: p, purpose, reason, confirmProbe });
  }

  // What is known about p, without asking for anything.
  peek(p: Params): Observation | undefined {
    return this.obs.get(configKey(p));
  }
}
