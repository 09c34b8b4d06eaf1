import { afterEach, describe, expect, it } from 'vitest';
import { getEngine } from '../engines/index.js';
import type { BenchEvent } from './events.js';
import { planRequest } from './api.js';
import { applyPromptPolicy, UNIQUE_PREFIX_POLICY } from './cache.js';
import { runBench } from './index.js';
import type { BenchOptions } from './options.js';

interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}
interface FakeServer {
  url: string;
  received: Received[];
  close(): Promise<void>;
}
const FAKE = '../../test/fakes/sse-server.js';
const { startSseServer } = (await import(/* @vite-ignore */ FAKE)) as {
  startSseServer: (s: (r: Received) => object) => Promise<FakeServer>;
};

let server: FakeServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

// Bench a scripted server twice with the same options; returns what it received and the events.
async function benchTwice(o: Partial<BenchOptions>, script: (r: Received) => object = () => ({ frames: 3, itlMs: 1 })) {
  server = await startSseServer(script);
  const events: BenchEvent[] = [];
  const opts = {
    url: server.url,
    api: 'completions' as const,
    concurrency: [1, 2],
    requests: 2,
    warmup: 1,
    outputTokens: 3,
    inputTokens: 32,
    ...o,
  };
  const first = await runBench(opts, (e) => events.push(e));
  const second = await runBench(opts, (e) => events.push(e));
  return { received: server.received, events, first, second };
}

const prompts = (rs: Received[]) => rs.filter((r) => r.path === '/v1/completions').map((r) => String(r.body.prompt));

describe('fair measurements: every level starts from the same prefix-cache state', () => {
  it('llama.cpp: cache_prompt=false in every request body (warm-up included), prompts as given', async () => {
    const { received, first } = await benchTwice({ cachePolicy: getEngine('llamacpp').cachePolicy });
    const gen = received.filter((r) => r.path === '/v1/completions');
    expect(gen.length).toBe(2 * (2 + 2 + 2));
    expect(gen.every((r) => r.body.cache_prompt === false)).toBe(true);
    expect(received.some((r) => r.path === '/flush_cache')).toBe(false);
    expect(prompts(received).every((p) => !p.startsWith('['))).toBe(true);
    expect(first.cachePolicy).toMatch(/cache_prompt=false/);
  });

  it('SGLang: POST /flush_cache after each warm-up, before each measured level, and unique prompts across runs', async () => {
    const { received } = await benchTwice({ cachePolicy: getEngine('sglang').cachePolicy });
    const paths = received.map((r) => r.path);
    // Per run: level 1 (1 warm-up, flush, 2 measured), level 2 (1 warm-up, flush, 2 measured).
    const oneRun = [
      '/v1/completions',
      '/flush_cache',
      '/v1/completions',
      '/v1/completions',
      '/v1/completions',
      '/flush_cache',
      '/v1/completions',
      '/v1/completions',
    ];
    expect(paths).toEqual([...oneRun, ...oneRun]);
    const all = prompts(received);
    expect(new Set(all).size).toBe(all.length);
    expect(all.every((p) => /^\[[0-9a-f]{12}-bench-\d+\] /.test(p))).toBe(true);
  });

  it('vLLM: POST /reset_prefix_cache; a reset that fails is said once per run and the run goes on', async () => {
    const { received, events, first } = await benchTwice({ cachePolicy: getEngine('vllm').cachePolicy }, (r) =>
      r.path === '/reset_prefix_cache' ? { status: 404 } : { frames: 3, itlMs: 1 },
    );
    expect(received.filter((r) => r.path === '/reset_prefix_cache')).toHaveLength(2);
    const warns = events.filter(
      (e) => e.type === 'log' && e.level === 'warn' && /reset_prefix_cache failed \(HTTP 404\)/.test(e.message),
    );
    expect(warns).toHaveLength(2);
    expect(first.runs.map((r) => r.requests.ok)).toEqual([2, 2]);
  });

  it('default (engine unknown): a random prefix unique to the run and the request', async () => {
    const { received, first } = await benchTwice({});
    const all = prompts(received);
    expect(new Set(all).size).toBe(all.length);
    expect(first.cachePolicy).toBe(UNIQUE_PREFIX_POLICY.description);
  });

  it('puts the tag in front of the first chat message and adds the policy fields to the body', () => {
    const p = applyPromptPolicy(UNIQUE_PREFIX_POLICY, 'abc', 'bench-1', {
      text: 'hi',
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'yo' },
      ],
    });
    expect(p.messages).toEqual([
      { role: 'user', content: '[abc-bench-1] hi' },
      { role: 'assistant', content: 'yo' },
    ]);
    const body = JSON.parse(planRequest('chat', null, p, 'bench-1', 8, null, { cache_prompt: false }).body) as Record<
      string,
      unknown
    >;
    expect(body.cache_prompt).toBe(false);
    expect(body.max_tokens).toBe(8);
  });
});
