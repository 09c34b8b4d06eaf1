// The true optimum of the seed profile over speculative_num_steps 1..10, from the simulator's own pure model.
import { PROFILE } from './tune-support.js';

/** Speed at concurrency 1 by step count, for the steps that fit in memory. */
export interface Optimum {
  best: number;
  bestSteps: number;
  speedOf(steps: number): number;
}

// Ask the built simulator model (dist/) what each step count yields; `minRunning` excludes configs whose
// max_running_requests cannot hold the constraint's batch.
export async function trueOptimum(minRunning = 1): Promise<Optimum> {
  const sim = (await import('../../dist/sim/index.js')) as {
    loadProfile(n: string): unknown;
    resolveSettings(p: unknown, i: Record<string, unknown>): unknown;
    computeCapacity(p: unknown, s: unknown): { ok: boolean; maxRunningRequests?: number };
    predictDecodeTokensPerSec(p: unknown, s: unknown, batch: number): number;
  };
  const profile = sim.loadProfile(PROFILE);
  const speeds = new Map<number, number>();
  for (let steps = 1; steps <= 10; steps++) {
    const s = sim.resolveSettings(profile, { speculative_algorithm: 'EAGLE', speculative_num_steps: steps, speculative_eagle_topk: 1, tp_size: 2 });
    const cap = sim.computeCapacity(profile, s);
    if (cap.ok && (cap.maxRunningRequests ?? 0) >= minRunning) speeds.set(steps, sim.predictDecodeTokensPerSec(profile, s, 1));
  }
  let bestSteps = 1;
  for (const [k, v] of speeds) if (v > (speeds.get(bestSteps) ?? 0)) bestSteps = k;
  return { best: speeds.get(bestSteps) ?? 0, bestSteps, speedOf: (n) => speeds.get(n) ?? 0 };
}
