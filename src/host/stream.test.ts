import { describe, expect, it } from 'vitest';
import { LocalHost } from './local.js';

describe('LocalHost.stream', () => {
  it('delivers output while the command runs and kill() ends it', async () => {
    const s = new LocalHost().stream(['sh', '-c', 'echo first; exec sleep 30']);
    const first = await new Promise<string>((resolve) => s.stdout.once('data', (d: Buffer) => resolve(d.toString())));
    expect(first).toBe('first\n');
    const t0 = Date.now();
    s.kill();
    const end = await s.exited;
    expect(end.signal).toBe('SIGTERM');
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('reports a missing binary as exit 127 and stops on abort', async () => {
    const missing = await new LocalHost().stream(['/nonexistent/spectune-binary']).exited;
    expect(missing.exitCode).toBe(127);
    const ac = new AbortController();
    const s = new LocalHost().stream(['sleep', '30'], { signal: ac.signal });
    ac.abort();
    expect((await s.exited).signal).toBe('SIGTERM');
  });
});
