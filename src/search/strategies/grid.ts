// Grid and random strategies: what the other tools do (vLLM sweep, SGLang auto_benchmark tiers), kept as references.
import { configKey, type Observation } from '../history.js';
import type { Params, Proposal, SearchOptions, SearchSpace } from '../types.js';
import { createRandom as mulberry32 } from '../../random.js';

// Every combination has to be enumerated lazily: a 4-setting space can have 10^6 points.
const MAX_RANDOM_DRAWS = 1000;

// The i-th point of the grid (last setting varies fastest), or null past the end.
export function gridPoint(space: SearchSpace, base: Params, i: number): Params | null {
  const p: Params = { ...base };
  let rest = i;
  for (let d = space.length - 1; d >= 0; d--) {
    const n = space[d].values.length;
    p[space[d].key] = space[d].values[rest % n];
    rest = Math.floor(rest / n);
  }
  return rest === 0 ? p : null;
}

// Number of grid points.
export function gridSize(space: SearchSpace): number {
  return space.reduce((n, d) => n * d.values.length, 1);
}

// The first grid point not measured yet (baseline first), or done.
export function proposeGrid(space: SearchSpace, opts: SearchOptions, obs: Map<string, Observation>): Proposal {
  if (!obs.has(configKey(opts.baseline)))
    return {
      done: false,
      params: opts.baseline,
      purpose: 'baseline',
      reason: 'baseline: the config in force',
      confirmProbe: false,
    };
  const total = gridSize(space);
  for (let i = 0; i < total; i++) {
    const p = gridPoint(space, opts.baseline, i)!;
    if (!obs.has(configKey(p)))
      return { done: false, params: p, purpose: 'grid', reason: `grid point ${i + 1}/${total}`, confirmProbe: false };
  }
  return { done: true, reason: 'grid exhausted', best: null };
}

// Re-exported from the shared PRNG so existing callers keep their name.
export { createRandom as mulberry32 } from '../../random.js';

// A random unmeasured point, seeded by the seed and the number of observations so far.
export function proposeRandom(space: SearchSpace, opts: SearchOptions, obs: Map<string, Observation>): Proposal {
  if (!obs.has(configKey(opts.baseline)))
    return {
      done: false,
      params: opts.baseline,
      purpose: 'baseline',
      reason: 'baseline: the config in force',
      confirmProbe: false,
    };
  const total = gridSize(space);
  const rand = mulberry32((opts.seed ?? 1) * 7919 + obs.size);
  for (let k = 0; k < MAX_RANDOM_DRAWS; k++) {
    const p = gridPoint(space, opts.baseline, Math.floor(rand() * total))!;
    if (!obs.has(configKey(p)))
      return {
        done: false,
        params: p,
        purpose: 'random',
        reason: `random point (seed ${opts.seed ?? 1})`,
        confirmProbe: false,
      };
  }
  const rest = proposeGrid(space, opts, obs);
  return rest.done ? { done: true, reason: 'every point measured', best: null } : { ...rest, purpose: 'random' };
}
