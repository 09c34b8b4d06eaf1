import { describe, expect, it } from 'vitest';
import { createRng, drawAccepted, drawJitter, nextUniform } from './sampler.js';
import { planLength, parseGenSpec } from './openai.js';

describe('sampler', () => {
  it('accepted draws follow the acceptance curve; 100 steps already hit the mean within 2%', () => {
    const curve = [0.98, 0.96, 0.9, 0.7];
    let u = 0.3;
    let sum = 0;
    for (let i = 0; i < 100; i++) {
      u = nextUniform(u);
      sum += drawAccepted(curve, u);
    }
    const mean = curve.reduce((a, b) => a + b, 0);
    expect(Math.abs(sum / 100 / mean - 1)).toBeLessThan(0.02);
    expect(drawAccepted(curve, 0.99)).toBe(0);
    expect(drawAccepted(curve, 0)).toBe(4);
  });

  it('jitter stays in its band and the PRNG is seeded', () => {
    const a = createRng(7);
    const b = createRng(7);
    for (let i = 0; i < 50; i++) {
      const j = drawJitter(a, 0.02);
      expect(j).toBeGreaterThanOrEqual(0.98);
      expect(j).toBeLessThanOrEqual(1.02);
      expect(drawJitter(b, 0.02)).toBe(j);
    }
  });
});

describe('request length', () => {
  const spec = (body: Record<string, unknown>) => {
    const r = parseGenSpec('chat', { messages: [{ role: 'user', content: 'hi' }], ...body });
    if (!r.ok) throw new Error(r.error);
    return r.spec;
  };
  it('ignore_eos runs to max_tokens', () => {
    expect(planLength(spec({ max_tokens: 1000, ignore_eos: true }), 'a')).toEqual({ tokens: 1000, reason: 'length' });
  });
  it('a natural stop never comes before min_tokens and never after max_tokens', () => {
    expect(planLength(spec({ max_tokens: 5000, min_tokens: 4000 }), 'a')).toEqual({ tokens: 4000, reason: 'stop' });
    expect(planLength(spec({ max_tokens: 3 }), 'a')).toEqual({ tokens: 3, reason: 'length' });
  });
  it('rid or user becomes the request id; bad numbers are 400s', () => {
    expect(spec({ rid: 'bench-1' }).rid).toBe('bench-1');
    expect(spec({ user: 'bench-2' }).rid).toBe('bench-2');
    expect(parseGenSpec('chat', { messages: [], max_tokens: -1 }).ok).toBe(false);
    expect(parseGenSpec('chat', { prompt: 'x' }).ok).toBe(false);
  });
});
