import { afterEach, describe, expect, it } from 'vitest';
import { getEngineEndpoints } from '../engines/index.js';
import type { BenchEvent } from './events.js';
import { runBench } from './index.js';
import type { BenchOptions } from './options.js';

// The fake lives in test/fakes (outside tsc's rootDir), so it is imported at run time with a local type.
interface Script {
  status?: number;
  ttftMs?: number;
  itlMs?: number;
  frames?: number;
  tokensPerFrame?: number;
  usage?: boolean;
  endAfterFrames?: number;
  finishWithoutDoneAfter?: number;
  stallAfterFrames?: number;
  byteByByte?: boolean;
  errorFrame?: boolean;
}
interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}
interface FakeServer {
  url: string;
  received: Received[];
  metrics: string | null;
  serverInfo: unknown;
  close(): Promise<void>;
}
const FAKE = '../../test/fakes/sse-server.js';
const { startSseServer } = (await import(/* @vite-ignore */ FAKE)) as {
  startSseServer: (s: (r: Received, n: number) => Script) => Promise<FakeServer>;
};

let server: FakeServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

async function bench(script: (r: Received, n: number) => Script, o: Partial<BenchOptions> = {}) {
  server = await startSseServer(script);
  const events: BenchEvent[] = [];
  const result = await runBench(
    { url: server.url, requests: 4, warmup: 0, outputTokens: 10, inputTokens: 64, ...o },
    (e) => events.push(e),
  );
  return { result, events, run: result.runs[0], received: server.received };
}

describe('runBench against a scripted SSE server', () => {
  it('measures TTFT, ITL and decode tok/s of an exact schedule and sends ids and a fixed length', async () => {
    const { run, result, received } = await bench(() => ({ ttftMs: 60, itlMs: 20, frames: 10 }), { requests: 3 });
    expect(run.requests).toEqual({ ok: 3, failed: 0 });
    expect(run.ttftMs.mean).toBeGreaterThanOrEqual(59);
    expect(run.ttftMs.mean).toBeLessThan(400);
    expect(run.itlMs.mean).toBeGreaterThan(15);
    // Upper bounds are loose: on a loaded machine timers fire late and processes wait to be scheduled; the exact
    // figures are the accuracy benchmark's job (bench/accuracy.mjs). Lower bounds hold whatever the load.
    expect(run.itlMs.mean).toBeLessThan(80);
    expect(run.decodeTokensPerSec.p50).toBeGreaterThan(12);
    expect(run.decodeTokensPerSec.p50).toBeLessThan(67);
    expect(run.usageFromServer).toBe(true);
    expect(result.samples.map((s) => s.outputTokens)).toEqual([10, 10, 10]);
    expect(received.map((r) => r.headers['x-request-id'])).toEqual(['bench-1', 'bench-2', 'bench-3']);
    expect(received[0].path).toBe('/v1/chat/completions');
    expect(result.model).toBe('fake/model-7b');
    expect(received[0].body).toMatchObject({
      model: 'fake/model-7b',
      stream: true,
      max_tokens: 10,
      min_tokens: 10,
      ignore_eos: true,
      user: 'bench-1',
      rid: 'bench-1',
      stream_options: { include_usage: true },
    });
  });

  it('takes token counts from usage when frames carry several tokens (speculative decoding)', async () => {
    const { run, result } = await bench(() => ({ itlMs: 10, frames: 5, tokensPerFrame: 3 }), { requests: 2 });
    expect(result.samples[0].outputTokens).toBe(15);
    // (15 - 1) tokens over 4 gaps of >=10 ms: <=350 tok/s, far above the <=100 frames/s a chunk counter would report.
    expect(run.decodeTokensPerSec.mean).toBeGreaterThan(100);
    expect(run.decodeTokensPerSec.mean).toBeLessThan(360);
  });

  it('falls back to frame counts without usage and says so', async () => {
    const { run, events, result } = await bench(() => ({ frames: 6, usage: false }), { requests: 2 });
    expect(run.usageFromServer).toBe(false);
    expect(result.samples[0].outputTokens).toBe(6);
    expect(events.some((e) => e.type === 'log' && e.level === 'warn' && e.message.includes('no usage'))).toBe(true);
  });

  it('counts frames that arrive together and warns when they are many', async () => {
    const { run, events } = await bench(() => ({ frames: 8, framesPerWrite: 2, itlMs: 5 }), { requests: 2 });
    expect(run.requests.ok).toBe(2);
    // Two frames per write: the second of each pair has no arrival time of its own.
    expect(run.sharedReadFrames).toBeGreaterThanOrEqual(8);
    expect(
      events.some(
        (e) =>
          e.type === 'log' &&
          e.level === 'warn' &&
          e.message.includes('arrived in one read with the frame before them'),
      ),
    ).toBe(true);
    const steady = await bench(() => ({ frames: 8, itlMs: 5 }), { requests: 2 });
    expect(steady.run.sharedReadFrames).toBe(0);
  });

  it('parses frames written one byte at a time', async () => {
    const { run, result } = await bench(() => ({ frames: 6, byteByByte: true }), { requests: 2 });
    expect(run.requests.ok).toBe(2);
    expect(result.samples[0].outputTokens).toBe(6);
    expect(run.itlMs.mean).not.toBeNull();
  });

  it('counts errors by phase: HTTP status, ended early, no [DONE], error frame', async () => {
    const scripts: Script[] = [
      { status: 500 },
      { endAfterFrames: 2 },
      { finishWithoutDoneAfter: 3 },
      { errorFrame: true },
      {},
      {},
    ];
    const { run, result } = await bench((_r, n) => scripts[n], { requests: 6, concurrency: [1] });
    expect(run.requests).toEqual({ ok: 2, failed: 4 });
    expect(run.errors).toMatchObject({ httpStatus: 1, endedEarly: 2, other: 1 });
    expect(result.samples[0].error).toContain('HTTP 500');
  });

  it('times out stalls and first tokens by phase', async () => {
    const scripts: Script[] = [{ stallAfterFrames: 2 }, { ttftMs: 5_000 }, {}];
    const { run } = await bench((_r, n) => scripts[n], { requests: 3, timeouts: { stall: 150, firstToken: 300 } });
    expect(run.errors).toMatchObject({ stall: 1, firstTokenTimeout: 1 });
    expect(run.requests.ok).toBe(1);
  });

  it('stops a level early when errors pass the threshold', async () => {
    const { run, events } = await bench((_r, n) => (n < 2 ? {} : { status: 503 }), { requests: 40, warmup: 2 });
    expect(run.stoppedEarly).toMatch(/requests failed/);
    expect(run.requests.ok + run.requests.failed).toBeLessThan(40);
    expect(events.some((e) => e.type === 'bench:stopped')).toBe(true);
  });

  it('skips higher levels once output tok/s stops growing (stopAtSaturation)', async () => {
    // Requests after the first level stream 100x slower: 4 streams give less than 1 did, as a saturated batch would.
    const { result, events } = await bench((_r, n) => ({ frames: 6, itlMs: n < 4 ? 1 : 100, ttftMs: 1 }), {
      concurrency: [1, 4, 16],
      requests: 4,
      stopAtSaturation: true,
    });
    expect(result.runs.map((r) => [r.concurrency, r.outputTokensPerSec])).toEqual([
      [1, expect.any(Number)],
      [4, expect.any(Number)],
    ]);
    const stop = events.find((e) => e.type === 'bench:stopped');
    expect(stop).toMatchObject({ concurrency: 4, reason: expect.stringMatching(/server saturated: .*skipping 16/) });
  });

  it('measures for a duration instead of a request count', async () => {
    const { run } = await bench(() => ({ frames: 4, itlMs: 5, ttftMs: 1 }), {
      requests: null,
      durationSec: 0.3,
      concurrency: [2],
    });
    expect(run.requests.ok).toBeGreaterThan(2);
    expect(run.durationMs).toBeGreaterThanOrEqual(300);
  });

  it('stops and rejects when the caller aborts', async () => {
    server = await startSseServer(() => ({ frames: 1000, itlMs: 10 }));
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 150);
    await expect(runBench({ url: server.url, requests: 4, warmup: 0 }, undefined, ac.signal)).rejects.toMatchObject({
      code: 'E_BENCH_FAILED',
      message: 'benchmark aborted',
    });
  });

  it('an abort during the warm-up issues no measured request (the measured level starts on an aborted signal)', async () => {
    let requests = 0;
    server = await startSseServer(() => {
      requests += 1;
      return { frames: 50, itlMs: 10 };
    });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 150);
    const t0 = Date.now();
    await expect(runBench({ url: server.url, requests: 12, warmup: 2 }, undefined, ac.signal)).rejects.toMatchObject({
      code: 'E_BENCH_FAILED',
      message: 'benchmark aborted',
    });
    // warm-up requests only (the first is cut at 150 ms); a measured level would have sent 12 more, 500 ms each
    expect(requests).toBeLessThanOrEqual(2);
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('a refused key (401/403) names where the key comes from, not --api and --model', async () => {
    server = await startSseServer(() => ({ status: 401 }));
    const bare = await runBench({ url: server.url, requests: 2, warmup: 2 }).catch((e: unknown) => e);
    expect(bare).toMatchObject({ code: 'E_BENCH_FAILED', hint: expect.stringContaining('export SPECTUNE_API_KEY=') });
    expect((bare as { hint: string }).hint).not.toContain('--model');
    await server.close();
    server = await startSseServer(() => ({ status: 403 }));
    const hint = "export MY_KEY=<the value of the unit's --api-key> before running spectune";
    await expect(runBench({ url: server.url, requests: 2, warmup: 2, authHint: hint })).rejects.toMatchObject({
      code: 'E_BENCH_FAILED',
      hint,
    });
  });

  it('reports a server that rejects everything as an error with a hint', async () => {
    server = await startSseServer(() => ({ status: 404 }));
    await expect(runBench({ url: server.url, requests: 2, warmup: 2 })).rejects.toMatchObject({
      code: 'E_BENCH_FAILED',
      hint: expect.stringContaining('--api'),
    });
  });

  it('reports a refused connection as E_BENCH_CONNECT', async () => {
    server = await startSseServer(() => ({}));
    const url = server.url;
    await server.close();
    server = null;
    await expect(runBench({ url, requests: 1 })).rejects.toMatchObject({
      code: 'E_BENCH_CONNECT',
      hint: expect.stringContaining('--url'),
    });
  });

  it('scrapes the engine view around the level and reports SGLang acceptance length', async () => {
    server = await startSseServer(() => ({ frames: 4 }));
    server.metrics =
      '# TYPE sglang:spec_accept_length gauge\nsglang:spec_accept_length{model_name="m",tp_rank="0"} 2.75\nsglang:num_running_reqs{tp_rank="0"} 3\nsglang:token_usage 0.4\n';
    server.serverInfo = { max_running_requests: 17, internal_states: [{ avg_spec_accept_length: 2.5 }] };
    const r = await runBench({ url: server.url, requests: 4, warmup: 1, concurrency: [2] });
    expect(r.runs[0].acceptLength).toBe(2.75);
    expect(r.runs[0].engine.after).toMatchObject({
      runningRequests: 3,
      kvUsage: 0.4,
      maxRunningRequests: 17,
      serverAvgAcceptLength: 2.5,
    });
    expect(r.runs[0].engine.during).not.toBeNull();
  });

  it("scrapes only the named engine's endpoints: no /server_info for vLLM", async () => {
    server = await startSseServer(() => ({ frames: 2 }));
    server.metrics = 'vllm:num_requests_running 1\n';
    server.serverInfo = { max_running_requests: 17 };
    const vl = await runBench({ url: server.url, requests: 1, warmup: 0, engineEndpoints: getEngineEndpoints('vllm') });
    expect(vl.runs[0].engine.after).toMatchObject({ runningRequests: 1, maxRunningRequests: null });
    const any = await runBench({ url: server.url, requests: 1, warmup: 0 });
    expect(any.runs[0].engine.after).toMatchObject({ runningRequests: 1, maxRunningRequests: 17 });
  });

  it('runs several closed-loop levels and an open-loop Poisson rate', async () => {
    const closed = await bench(() => ({ frames: 4, itlMs: 2 }), { concurrency: [1, 4], requests: 8 });
    expect(closed.result.runs.map((r) => [r.concurrency, r.requests.ok])).toEqual([
      [1, 8],
      [4, 8],
    ]);
    await server!.close();
    const open = await bench(() => ({ frames: 4, itlMs: 2 }), { concurrency: [8], rate: 50, requests: 10 });
    expect(open.run.rate).toBe(50);
    expect(open.run.requests.ok).toBe(10);
    // 10 Poisson arrivals at 50/s take ~200 ms on average; a closed loop at 8 would finish in a fraction of that.
    expect(open.run.durationMs).toBeGreaterThan(60);
  });

  it('speaks the completions and SGLang native APIs', async () => {
    const c = await bench(() => ({ frames: 3 }), { api: 'completions', requests: 1 });
    expect(c.received[0]).toMatchObject({ path: '/v1/completions', body: { ignore_eos: true } });
    expect(c.run.requests.ok).toBe(1);
    await server!.close();
    const s = await bench(() => ({ frames: 3 }), { api: 'sglang', requests: 1 });
    expect(s.received[0]).toMatchObject({
      path: '/generate',
      body: { rid: 'bench-1', sampling_params: { max_new_tokens: 10, min_new_tokens: 10, ignore_eos: true } },
    });
    expect(s.run.requests.ok).toBe(1);
  });
});
