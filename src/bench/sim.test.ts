import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runBench } from './index.js';

// The simulated SGLang engine, run from the build (`npm run build` first); skipped when it is not built.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SIM_BUILT = existsSync(`${ROOT}dist/cli/commands/sim.js`) && existsSync(`${ROOT}dist/sim/index.js`);
// Start-up of the simulated engine at time scale 0.01 takes a few seconds; a loaded machine can take longer.
const READY_TIMEOUT_MS = 60_000;

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function waitHealthy(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`sim exited with ${child.exitCode}`);
    const ok = await fetch(`${url}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('sim not ready');
}

let child: ChildProcess | null = null;
afterAll(() => {
  child?.kill('SIGKILL');
});

describe('runBench against the simulated SGLang engine', () => {
  // The test command builds first; a missing build is a failure, never a silent skip.
  it('finds the built CLI (npm run build)', () => {
    expect(SIM_BUILT, 'dist/ is missing: run npm run build').toBe(true);
  });
  it('measures a speculative-decoding server and reads its acceptance length', async () => {
    const port = await freePort();
    child = spawn(
      process.execPath,
      [
        `${ROOT}bin/spectune.js`,
        'sim',
        '--sim-time-scale',
        '0.01',
        '--port',
        String(port),
        '--enable-metrics',
        '--speculative-algorithm',
        'EAGLE',
        '--speculative-num-steps',
        '3',
        '--speculative-eagle-topk',
        '1',
        '--speculative-num-draft-tokens',
        '4',
        '--speculative-draft-model-path',
        'draft',
      ],
      { stdio: 'ignore' },
    );
    const url = `http://127.0.0.1:${port}`;
    await waitHealthy(url, child);
    const r = await runBench({ url, concurrency: [1, 4], requests: 4, warmup: 1, outputTokens: 24, inputTokens: 64 });
    expect(r.runs.map((x) => x.requests)).toEqual([
      { ok: 4, failed: 0 },
      { ok: 4, failed: 0 },
    ]);
    expect(r.transport).toBe('native');
    expect(r.runs[0].usageFromServer).toBe(true);
    expect(r.samples.every((s) => s.outputTokens === 24)).toBe(true);
    expect(r.runs[0].acceptLength).toBeGreaterThan(1);
    expect(r.runs[1].outputTokensPerSec).toBeGreaterThan(0);
  }, 120_000);
});
