// `benchmark.timeouts.ready` is the start-up deadline of every start a systemd-style `tune` waits for (issue 19):
// a unit that never answers its health check fails at that deadline, not after the controller's default 20 minutes.
// The unit is a real process under the real process manager (same wiring as systemd targets: wireCampaign).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { createRenderer } from '../cli/render/index.js';
import { runTuneCommand } from './tune-command.js';

const dir = mkdtempSync(join(tmpdir(), 'spectune-ready-timeout-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function freePort(): Promise<number> {
  return new Promise((res) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => res(p));
    });
  });
}

describe('tune honours benchmark.timeouts.ready', () => {
  it('fails a start that never becomes ready at the configured 4 s, not the default 20 min', async () => {
    const port = await freePort();
    const units = join(dir, 'procman/etc/systemd/system');
    mkdirSync(units, { recursive: true });
    // A process that runs but never listens: health never answers, the unit never fails on its own.
    writeFileSync(
      join(units, 'hang.service'),
      [
        '[Service]',
        `ExecStart=${process.execPath} -e "setTimeout(()=>{},600000)" -- --port ${port}`,
        'TimeoutStopSec=5',
        '',
      ].join('\n'),
    );
    const config = join(dir, 'spectune.yaml');
    writeFileSync(
      config,
      [
        `target: { engine: sglang, endpoint: 'http://127.0.0.1:${port}', manager: process, processDir: ./procman, hosts: [{ unit: hang.service }] }`,
        'space: { speculative_num_steps: { values: [3] } }',
        'search: { strategy: grid, repeats: 1, soak: { repeats: 0 } }',
        'benchmark: { concurrency: [1], requests: [2], inputTokens: 16, outputTokens: 8, warmup: 0, timeouts: { ready: 4s } }',
        'budget: { trials: 1, hours: 1h }',
        'store: ./store.db',
        '',
      ].join('\n'),
    );
    const err = new PassThrough();
    let text = '';
    err.on('data', (d) => {
      text += d;
    });
    const renderer = createRenderer('plain', err);
    const t0 = Date.now();
    const outcome = await runTuneCommand({
      configPath: config,
      baseDir: dir,
      resume: false,
      dryRun: false,
      restore: false,
      env: {},
      onEvent: renderer.onEvent.bind(renderer),
      signal: new AbortController().signal,
    }).then(
      (r) => ({ r, e: null as unknown }),
      (e: unknown) => ({ r: null, e }),
    );
    const elapsed = Date.now() - t0;
    expect(elapsed).toBeLessThan(50_000);
    const said = `${text}\n${outcome.e instanceof Error ? outcome.e.message : ''}\n${JSON.stringify(outcome.r ?? {})}`;
    // The deadline named is the configured one (4 s), never the 20 min default.
    expect(said).toMatch(/not ready 4 s after its start \(start-up deadline\)/);
    expect((outcome.e as { code?: string } | null)?.code).toBe('E_SERVICE_FAILED');
    expect(said).not.toMatch(/20 ?min|1200 ?s/);
  }, 90_000);
});
