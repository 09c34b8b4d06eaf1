import { describe, expect, it } from 'vitest';
import { resolveSpeculative } from './settings.js';

describe('resolveSpeculative (SGLang server_args rules)', () => {
  it('no algorithm → no speculation', () => {
    expect(resolveSpeculative({})).toEqual({ spec: null, adjusted: false });
  });
  it('algorithm only → auto choice (3, 1, 4) without the warning', () => {
    expect(resolveSpeculative({ speculative_algorithm: 'EAGLE' })).toEqual({
      spec: { algorithm: 'EAGLE', numSteps: 3, topk: 1, numDraftTokens: 4 },
      adjusted: false,
    });
  });
  it('topk == 1 forces draft tokens = steps + 1 and logs the warning when they differ', () => {
    const r = resolveSpeculative({
      speculative_algorithm: 'NEXTN',
      speculative_num_steps: 10,
      speculative_eagle_topk: 1,
      speculative_num_draft_tokens: 4,
    });
    expect(r).toEqual({ spec: { algorithm: 'EAGLE', numSteps: 10, topk: 1, numDraftTokens: 11 }, adjusted: true });
  });
  it('no warning when draft tokens already equal steps + 1', () => {
    expect(
      resolveSpeculative({
        speculative_algorithm: 'EAGLE',
        speculative_num_steps: 2,
        speculative_eagle_topk: 1,
        speculative_num_draft_tokens: 3,
      }).adjusted,
    ).toBe(false);
  });
  it('topk > 1 keeps the configured tree budget', () => {
    const r = resolveSpeculative({
      speculative_algorithm: 'EAGLE3',
      speculative_num_steps: 5,
      speculative_eagle_topk: 4,
      speculative_num_draft_tokens: 8,
    });
    expect(r.spec).toEqual({ algorithm: 'EAGLE3', numSteps: 5, topk: 4, numDraftTokens: 8 });
    expect(r.adjusted).toBe(false);
  });
});
