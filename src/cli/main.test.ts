import { describe, expect, it } from 'vitest';
import { PassThrough } from 'node:stream';
import { main } from './main.js';

// Collect what main() writes.
function captureIo() {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (d) => { stdout += d; });
  err.on('data', (d) => { stderr += d; });
  return { io: { stdout: out, stderr: err, env: {} }, text: () => ({ stdout, stderr }) };
}

describe('main', () => {
  it('prints help and exits 2 without a command', async () => {
    const c = captureIo();
    expect(await main([], c.io)).toBe(2);
    expect(c.text().stdout).toContain('usage: spectune');
  });
  it('rejects an unknown command with a one-line error and a hint', async () => {
    const c = captureIo();
    expect(await main(['frobnicate'], c.io)).toBe(2);
    expect(c.text().stderr.trim().split('\n')).toHaveLength(1);
    expect(c.text().stderr).toContain('unknown command "frobnicate"');
  });
});
