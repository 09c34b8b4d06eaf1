// `spectune tune` under `manager: process` (hosts without systemd, the GPU recipe in scripts/gpu): the real
// process manager starts the operator's unit, every trial deploys a drop-in and restarts it, a failing config
// is diagnosed and rolled back, and the service stops when spectune exits. The unit runs the real sim process.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { createRenderer } from '../cli/render/index.js';
import { runTuneCommand } from './tune-command.js';

const ROOT = join(import.meta.dirname, '../..');
const BUILT = existsSync(join(ROOT, 'dist/cli/commands/sim.js'));
const dir = mkdtempSync(join(tmpdir(), 'spectune-procman-tune-'));
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

// The sim's unit (steps=10 does not fit its KV budget: the start dies with `Not enough memory`).
function writeFiles(port: number, steps: number[]): string {
  const units = join(dir, 'procman/etc/systemd/system');
  mkdirSync(units, { recursive: true });
  writeFileSync(
    join(units, 'sim-tune.service'),
    [
      '[Service]',
      `ExecStart=${process.execPath} ${join(ROOT, 'bin/spectune.js')} sim --sim-profile qwen3.5-122b-a10b-2node --sim-time-scale 0.01 --model-path Qwen/Qwen3.5-122B-A10B-FP8 --host 127.0.0.1 --port ${port} --tp-size 2 --speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1`,
      'Restart=always',
      'RestartSec=1',
      'TimeoutStopSec=10',
      '',
    ].join('\n'),
  );
  const config = join(dir, 'spectune.yaml');
  writeFileSync(
    config,
    [
      `target: { engine: sglang, endpoint: 'http://127.0.0.1:${port}', manager: process, processDir: ./procman, hosts: [{ unit: sim-tune.service }] }`,
      `space: { speculative_num_steps: { values: [${steps.join(', ')}] } }`,
      'search: { strategy: grid, noiseMargin: 4%, repeats: 1, soak: { repeats: 0 } }',
      'objective: { metric: decodeTokensPerSec.mean, concurrency: 1 }',
      'benchmark: { concurrency: [1, 2], requests: [2, 4], inputTokens: 64, outputTokens: 32, warmup: 1, timeouts: { ready: 60s, firstToken: 30s, stall: 10s, total: 60s } }',
      'budget: { trials: 6, hours: 1h }',
      'store: ./store.db',
      '',
    ].join('\n'),
  );
  return config;
}

function io() {
  const err = new PassThrough();
  let stderr = '';
  err.on('data', (d) => {
    stderr += d;
  });
  const renderer = createRenderer('plain', err);
  return { io: { env: {}, onEvent: renderer.onEvent.bind(renderer) }, text: () => stderr };
}

describe.runIf(BUILT)('spectune tune with manager: process', () => {
  it('starts the unit, tunes it through drop-ins, rolls back a failing config, reports per concurrency, stops it at exit', async () => {
    const port = await freePort();
    const config = writeFiles(port, [3, 4, 10]);
    const c = io();
    // confirmProbes: the memory predictor refuses steps=10; deploying it once shows the real failure and the rollback.
    const r = await runTuneCommand({
      configPath: config,
      baseDir: dir,
      resume: false,
      dryRun: false,
      restore: false,
      confirmProbes: true,
      ...c.io,
      signal: new AbortController().signal,
    });
    expect(r.kind).toBe('campaign');
    if (r.kind !== 'campaign') return;
    const byStatus = r.result.trials.map((t) => [t.config.speculative_num_steps, t.status]);
    expect(byStatus.slice(0, 3)).toEqual([
      [3, 'ok'],
      [4, 'ok'],
      [10, 'failed'],
    ]);
    expect(byStatus.slice(3).every(([, st]) => st === 'ok')).toBe(true);
    expect(r.result.trials[2].verdict?.class).toMatch(/crash_loop|kv_cache_oom/);
    expect(c.text()).toMatch(/process manager: starting sim-tune\.service/);
    expect(c.text()).toMatch(/rollback/i);
    // The SGLang adapter's cache reset (POST /flush_cache before each measured level) is answered by the sim.
    expect(c.text()).not.toMatch(/flush_cache failed/);
    expect(r.result.bestPerConcurrency.map((b) => b.concurrency)).toEqual([1, 2]);
    expect(r.result.summary).toMatch(/best by load \(output tok\/s\): c=1 speculative_num_steps=\d/);
    // The journal of the manager holds the sim's own lines; nothing answers on the port after exit.
    expect(readFileSync(join(dir, 'procman/procman/journal.jsonl'), 'utf8')).toContain('Not enough memory');
    await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
  }, 120_000);

  it('refuses a missing unit file with its path and creates nothing', async () => {
    const config = join(dir, 'missing.yaml');
    writeFileSync(
      config,
      "target: { engine: sglang, endpoint: 'http://127.0.0.1:9', manager: process, processDir: ./nowhere, hosts: [{ unit: x.service }] }\nspace: { speculative_num_steps: { values: [3, 4] } }\n",
    );
    const run = (dryRun: boolean) =>
      runTuneCommand({
        configPath: config,
        baseDir: dir,
        resume: false,
        dryRun,
        restore: false,
        ...io().io,
        signal: new AbortController().signal,
      });
    await expect(run(false)).rejects.toThrow(
      /target\.processDir: no unit file .*nowhere\/etc\/systemd\/system\/x\.service/,
    );
    expect(existsSync(join(dir, 'nowhere'))).toBe(false);
  });
});
