// The true optimum of the seed profile over speculative_num_steps 1..10, from the simulator's own pure model.
import { computeCapacity, loadProfile, predictDecodeTokensPerSec, resolveSettings } from '../../src/sim/index.js';
import { PROFILE } from './tune-support.js';

/** Speed at concurrency 1 by step count, for the steps that fit in memory. */
export interface Optimum {
  best: number;
  bestSteps: number;
  speedOf(steps: number): number;
}

// Ask the simulator's own model (the source the hosts' build is made from) what each step count yields;
// `minRunning` excludes configs whose max_running_requests cannot hold the constraint's batch.
export async function trueOptimum(minRunning = 1): Promise<Optimum> {
  const profile = loadProfile(PROFILE);
  const speeds = new Map<number, number>();
  for (let steps = 1; steps <= 10; steps++) {
    const s = resolveSettings(profile, {
      speculative_algorithm: 'EAGLE',
      speculative_num_steps: steps,
      speculative_eagle_topk: 1,
      tp_size: 2,
    });
    const cap = computeCapacity(profile, s);
    if (cap.ok && (cap.maxRunningRequests ?? 0) >= minRunning)
      speeds.set(steps, predictDecodeTokensPerSec(profile, s, 1));
  }
  let bestSteps = 1;
  for (const [k, v] of speeds) if (v > (speeds.get(bestSteps) ?? 0)) bestSteps = k;
  return { best: speeds.get(bestSteps) ?? 0, bestSteps, speedOf: (n) => speeds.get(n) ?? 0 };
}
