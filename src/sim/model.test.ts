import { describe, expect, it } from 'vitest';
import { loadProfile } from './profiles-io.js';
import { resolveSettings } from './settings.js';
import { computeCapacity, expectedAcceptLength, predictDecodeTokensPerSec } from './model.js';

const profile = loadProfile('qwen3.5-122b-a10b-2node');
const withSteps = (steps: number) =>
  resolveSettings(profile, { speculative_algorithm: 'EAGLE', speculative_num_steps: steps, speculative_eagle_topk: 1 });

describe('default profile reproduces the seed', () => {
  const SEED_TOK_S = [123, 186, 234, 277, 282];
  it.each(SEED_TOK_S.map((t, i) => [i + 1, t]))('steps=%i gives %i tok/s at concurrency 1 (±5%%)', (steps, target) => {
    const r = predictDecodeTokensPerSec(profile, withSteps(steps), 1);
    expect(Math.abs(r / target - 1)).toBeLessThan(0.05);
  });

  it('max_running_requests is 21 at steps=2 and 17 at steps=3', () => {
    const c2 = computeCapacity(profile, withSteps(2));
    const c3 = computeCapacity(profile, withSteps(3));
    expect(c2.ok && c2.maxRunningRequests).toBe(21);
    expect(c3.ok && c3.maxRunningRequests).toBe(17);
  });

  it('steps=10 with topk=1 does not fit (Not enough memory)', () => {
    const c = computeCapacity(profile, withSteps(10));
    expect(c.ok).toBe(false);
    expect(!c.ok && c.reason).toBe('not_enough_memory');
  });

  it('a larger batch slows each request down but raises the aggregate', () => {
    const s = withSteps(3);
    const r1 = predictDecodeTokensPerSec(profile, s, 1);
    const r8 = predictDecodeTokensPerSec(profile, s, 8);
    expect(r8).toBeLessThan(r1);
    expect(r8 * 8).toBeGreaterThan(r1);
  });

  it('accept length includes the bonus token and is bounded by steps + 1', () => {
    for (let steps = 1; steps <= 5; steps++) {
      const al = expectedAcceptLength(profile, withSteps(steps));
      expect(al).toBeGreaterThan(1);
      expect(al).toBeLessThanOrEqual(steps + 1);
    }
    expect(expectedAcceptLength(profile, resolveSettings(profile, {}))).toBe(1);
  });
});
