// Real llama-server (built by scripts/llamacpp/build-llama-server.sh) with generated GGUF target/draft pairs:
// speculative decoding really happens, acceptance follows the pair, and the best --spec-draft-n-max moves with it.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { llamacpp } from '../../src/engines/llamacpp/index.js';
import { planPair, writeModel } from '../../src/llamacpp/make-model.js';

const ROOT = process.env.SPECTUNE_LLAMA_DIR ?? '/var/lib/spectune-llama';
const BIN = join(ROOT, 'bin', 'llama-server');
const VOCAB = join(ROOT, 'vocab', 'ggml-vocab-llama-spm.gguf');
const MODELS = join(ROOT, 'models');
const FIGURES = process.env.SPECTUNE_LLAMA_FIGURES ?? '/tmp/spectune-llamacpp-figures.json';
// Tokens per measured request: long enough for a stable decode rate, short enough for seconds per trial.
const GEN_TOKENS = Number(process.env.SPECTUNE_LLAMA_GEN_TOKENS ?? 48);
// Measured requests per configuration (after a short warm-up); the median is reported.
const REPEATS = Number(process.env.SPECTUNE_LLAMA_REPEATS ?? 2);
// Tokens of the warm-up request (it only pages the weights in and fills caches).
const WARMUP_TOKENS = 4;
// A whole n-max grid of one pair: 5 server starts and ~15 requests on a slow shared 2-core machine.
const GRID_TIMEOUT_MS = 1_200_000;
// n-max values to try; 0 means no speculation at all (no draft model, no --spec-type).
const N_MAX_GRID = [0, 2, 4, 8, 16];
// Start-up budget: the models are read from the page cache after the first start.
const READY_TIMEOUT_MS = 120_000;
// Our own CPU budget: two threads, as on the CI machine.
const THREADS = '2';

const PAIRS = {
  perfect: { target: 'target-8L.gguf', deadScale: 0 },
  poor: { target: 'target-8L-poor.gguf', deadScale: 0.1 },
} as const;

interface Measurement {
  tokPerSec: number;
  acceptance: number | null;
  draftN: number | null;
}

let server: ChildProcess | null = null;

// A free loopback port (the kernel picks one, we release it for llama-server).
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer()
      .listen(0, '127.0.0.1', () => {
        const port = (s.address() as { port: number }).port;
        s.close(() => resolve(port));
      })
      .on('error', reject);
  });
}

// Generate any missing model of the pairs (the draft is the targets' shared first layer).
function ensureModels(): void {
  mkdirSync(MODELS, { recursive: true });
  for (const pair of Object.values(PAIRS)) {
    const plan = planPair({ layers: 8, draftLayers: 1, deadScale: pair.deadScale });
    if (!existsSync(join(MODELS, pair.target))) writeModel(join(MODELS, pair.target), plan.target, VOCAB);
    if (!existsSync(join(MODELS, 'draft-1L.gguf'))) writeModel(join(MODELS, 'draft-1L.gguf'), plan.draft, VOCAB);
  }
}

// Start llama-server and resolve once its ready line (the adapter's readyPattern) has appeared.
async function startServer(args: string[]): Promise<string> {
  const port = await freePort();
  const child = spawn(
    BIN,
    [...args, '--host', '127.0.0.1', '--port', String(port), '-c', '2048', '-t', THREADS, '-np', '1'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  server = child;
  let log = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`llama-server not ready in ${READY_TIMEOUT_MS} ms:\n${log.slice(-2000)}`)),
      READY_TIMEOUT_MS,
    );
    const onData = (b: Buffer) => {
      log += b.toString();
      if (llamacpp.readyPattern.test(log)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`llama-server exited ${code}:\n${log.slice(-2000)}`));
    });
  });
  const health = await fetch(`http://127.0.0.1:${port}${llamacpp.healthPath}`);
  expect(health.status).toBe(200);
  return `http://127.0.0.1:${port}`;
}

// Stop the server we started (SIGTERM with no request in flight exits at once).
async function stopServer(): Promise<void> {
  const child = server;
  server = null;
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

// One streaming chat request; returns the server's own decode rate and draft counters from the final chunk.
async function streamChat(base: string, prompt: string, maxTokens = GEN_TOKENS): Promise<Measurement> {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      messages: [{ role: 'user', content: prompt }],
      max_tokens: maxTokens,
      temperature: 0,
      ignore_eos: true,
      stream: true,
      stream_options: { include_usage: true },
    }),
  });
  expect(res.status).toBe(200);
  const text = await res.text();
  const chunks = text
    .split('\n')
    .filter((l) => l.startsWith('data: {'))
    .map((l) => JSON.parse(l.slice(6)) as { timings?: Record<string, number> });
  const timings = chunks.reverse().find((c) => c.timings)?.timings;
  if (!timings) throw new Error(`no timings in the stream:\n${text.slice(-500)}`);
  const metrics = llamacpp.parseMetrics(null, { timings });
  return {
    tokPerSec: timings.predicted_per_second,
    acceptance: metrics.acceptRate ?? null,
    draftN: timings.draft_n ?? null,
  };
}

// Median of a list of numbers.
function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

// Measure one server configuration: a warm-up request, then the median of REPEATS requests.
async function measure(args: string[]): Promise<Measurement> {
  const base = await startServer(args);
  try {
    await streamChat(base, 'Warm up.', WARMUP_TOKENS);
    const runs: Measurement[] = [];
    for (let i = 0; i < REPEATS; i++) runs.push(await streamChat(base, `Tell me a story about request ${i}.`));
    const acc = runs.map((r) => r.acceptance).filter((a): a is number => a !== null);
    return {
      tokPerSec: median(runs.map((r) => r.tokPerSec)),
      acceptance: acc.length ? median(acc) : null,
      draftN: runs[0].draftN,
    };
  } finally {
    await stopServer();
  }
}

// Server flags for one pair at one n-max (0 = no speculation).
function flagsFor(target: string, nMax: number): string[] {
  const m = ['-m', join(MODELS, target)];
  if (nMax === 0) return m;
  return [
    ...m,
    '-md',
    join(MODELS, 'draft-1L.gguf'),
    '--spec-type',
    'draft-simple',
    '--spec-draft-n-max',
    String(nMax),
  ];
}

describe('real llama-server speculative decoding', () => {
  const grid: Record<string, Record<number, Measurement>> = { perfect: {}, poor: {} };

  beforeAll(() => {
    // The test command builds the binary; a missing one is a failure, never a silent skip.
    expect(
      existsSync(BIN),
      `${BIN} is missing: build it with scripts/llamacpp/build-llama-server.sh (npm test does)`,
    ).toBe(true);
    expect(existsSync(VOCAB), `vocab GGUF ${VOCAB}`).toBe(true);
    ensureModels();
  });
  afterEach(stopServer);

  it('-md alone loads the draft but does not speculate (no draft_n), as the adapter says', async () => {
    const args = [
      '-m',
      join(MODELS, PAIRS.perfect.target),
      '-md',
      join(MODELS, 'draft-1L.gguf'),
      '--spec-draft-n-max',
      '8',
    ];
    expect(llamacpp.effectiveSettings(llamacpp.readSettings(['llama-server', ...args])).speculative_enabled).toBe(
      false,
    );
    const m = await measure(args);
    expect(m.draftN ?? 0).toBe(0);
  });

  it.each(Object.keys(PAIRS) as (keyof typeof PAIRS)[])(
    '%s pair: acceptance and decode rate across --spec-draft-n-max',
    async (pair) => {
      for (const nMax of N_MAX_GRID) grid[pair][nMax] = await measure(flagsFor(PAIRS[pair].target, nMax));
      const acceptance = grid[pair][8].acceptance!;
      if (pair === 'perfect') expect(acceptance).toBeGreaterThan(0.9);
      else expect(acceptance).toBeLessThan(0.5);
      expect(grid[pair][0].acceptance).toBeNull();
    },
    GRID_TIMEOUT_MS,
  );

  it('the best n-max differs between the pairs, and the perfect pair gains from speculation', () => {
    const best = (pair: string) =>
      N_MAX_GRID.reduce((b, n) => (grid[pair][n].tokPerSec > grid[pair][b].tokPerSec ? n : b), 0);
    const figures = { gridTokPerSec: grid, best: { perfect: best('perfect'), poor: best('poor') } };
    writeFileSync(FIGURES, JSON.stringify(figures, null, 2));
    console.log(
      `llamacpp-real figures (${FIGURES}):`,
      JSON.stringify(figures.best),
      JSON.stringify(
        Object.fromEntries(
          Object.entries(grid).map(([p, g]) => [
            p,
            Object.fromEntries(
              Object.entries(g).map(([n, m]) => [
                n,
                `${m.tokPerSec.toFixed(1)} tok/s acc=${m.acceptance?.toFixed(2) ?? '-'}`,
              ]),
            ),
          ]),
        ),
      ),
    );
    expect(grid.perfect[figures.best.perfect].tokPerSec).toBeGreaterThan(grid.perfect[0].tokPerSec * 1.2);
    expect(figures.best.perfect).toBeGreaterThan(figures.best.poor);
    expect(grid.poor[8].tokPerSec).toBeLessThan(grid.perfect[8].tokPerSec);
  });
});
