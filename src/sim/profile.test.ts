import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderProfileJsonSchema, validateProfile } from './profile.js';
import { listProfiles, loadProfile, profilesDir } from './profiles-io.js';
import { resolveSettings } from './settings.js';
import { computeCapacity, predictDecodeTokensPerSec } from './model.js';

// Steps (1..10, topk 1) with the best per-request decode speed at concurrency 1 among configs that start.
function bestSteps(name: string): number {
  const p = loadProfile(name);
  let best = { steps: 0, tokS: 0 };
  for (let steps = 1; steps <= 10; steps++) {
    const s = resolveSettings(p, {
      speculative_algorithm: 'EAGLE',
      speculative_num_steps: steps,
      speculative_eagle_topk: 1,
    });
    const tokS = predictDecodeTokensPerSec(p, s, 1);
    if (computeCapacity(p, s).ok && tokS > best.tokS) best = { steps, tokS };
  }
  return best.steps;
}

describe('profiles', () => {
  it('profiles/profile.schema.json is generated from the zod schema (regenerate it when this fails)', () => {
    const file = readFileSync(join(profilesDir(), 'profile.schema.json'), 'utf8');
    expect(JSON.parse(file)).toEqual(renderProfileJsonSchema());
  });

  it('ships at least three valid profiles, the default among them', () => {
    const names = listProfiles();
    expect(names).toEqual(expect.arrayContaining(['qwen3.5-122b-a10b-2node', 'qwen3-8b-1gpu', 'llama-3.1-70b-4gpu']));
    for (const n of names)
      expect(validateProfile(JSON.parse(readFileSync(join(profilesDir(), `${n}.json`), 'utf8'))).ok).toBe(true);
  });

  it('the llama-style profile has its optimum at a different step count than the default', () => {
    expect(bestSteps('llama-3.1-70b-4gpu')).toBe(7);
    expect(bestSteps('qwen3-8b-1gpu')).toBe(2);
    expect(bestSteps('qwen3.5-122b-a10b-2node')).toBe(4);
  });

  it('reports every invalid field as path: message', () => {
    const r = validateProfile({ name: '', timing: { load_seconds: -1 } });
    expect(r.ok).toBe(false);
    expect(!r.ok && r.errors.some((e) => e.startsWith('name:'))).toBe(true);
    expect(!r.ok && r.errors.some((e) => e.startsWith('timing.load_seconds:'))).toBe(true);
  });

  it('loadProfile names the shipped profiles when one is missing', () => {
    expect(() => loadProfile('nope')).toThrow(/simulator profile not found: nope/);
  });
});
