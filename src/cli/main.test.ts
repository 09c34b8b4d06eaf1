import { describe, expect, it } from 'vitest';
import { captureIo } from './io.js';
import { main } from './main.js';

describe('main', () => {
  it('prints help and exits 2 without a command', async () => {
    const c = captureIo();
    expect(await main([], c.io)).toBe(2);
    expect(c.text.stdout).toContain('usage: spectune');
  });
  it('rejects an unknown command with a one-line error and a hint', async () => {
    const c = captureIo();
    expect(await main(['frobnicate'], c.io)).toBe(2);
    expect(c.text.stderr.trim().split('\n')).toHaveLength(1);
    expect(c.text.stderr).toContain('unknown command "frobnicate"');
  });
});
