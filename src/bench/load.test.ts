import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { BenchEvent } from './events.js';
import { runLevel, type LevelContext } from './load.js';
import { RequestTimeline } from './metrics.js';
import { resolveBenchOptions } from './options.js';
import { SseScanner } from './sse.js';
import { createRequestState, type InFlight } from './request-state.js';
import type { Transport } from './transport.js';

// A transport whose requests do exactly what each test scripts, on the fake clock; no sockets.
type Step = (f: InFlight, st: ReturnType<typeof createRequestState>) => void;

function fakeTransport(script: Step[]): Transport {
  let n = 0;
  return {
    name: 'js',
    send(_url, _plan, id, now) {
      const st = createRequestState(id, new RequestTimeline(now()), new SseScanner(), now, () => {});
      script[n++ % script.length](st.inflight, st);
      return st.inflight;
    },
    getText: async () => null,
    close() {},
  };
}

function context(transport: Transport, events: BenchEvent[]): LevelContext {
  const opts = resolveBenchOptions({
    url: 'http://127.0.0.1:1',
    now: () => Date.now(),
    timeouts: { connect: 1000, firstToken: 5000, stall: 2000 },
  });
  let id = 0;
  return {
    opts,
    transport,
    url: new URL(opts.url),
    nextId: () => `bench-${++id}`,
    nextPrompt: () => ({ text: 'x' }),
    onEvent: (e) => events.push(e),
  };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('runLevel watchdog (fake timers)', () => {
  it('fails each request by the phase it is stuck in, exactly after its timeout', async () => {
    const never: Step = () => {};
    const connectedOnly: Step = (f) => {
      f.phase = 'first';
    };
    const stallsAfterOne: Step = (f) => {
      f.phase = 'first';
      setTimeout(() => {
        f.timeline.onFrames(1, Date.now());
        f.lastActivityMs = Date.now();
        f.phase = 'stream';
      }, 300);
    };
    const events: BenchEvent[] = [];
    const level = runLevel(
      context(fakeTransport([never, connectedOnly, stallsAfterOne]), events),
      3,
      { requests: 3, durationMs: null },
      true,
    );
    await vi.advanceTimersByTimeAsync(999);
    expect(events.filter((e) => e.type === 'bench:progress').at(-1)).toMatchObject({ done: 0 });
    await vi.advanceTimersByTimeAsync(6000);
    const out = await level;
    const byId = Object.fromEntries(out.samples.map((s) => [s.id, s]));
    expect(byId['bench-1']).toMatchObject({ errorPhase: 'connect', error: 'no connection after 1000 ms' });
    expect(byId['bench-2']).toMatchObject({ errorPhase: 'firstTokenTimeout' });
    expect(byId['bench-3']).toMatchObject({ errorPhase: 'stall', ttftMs: 300 });
    // The watchdog ticks every 250 ms here (a quarter of the shortest timeout, capped), so a failure lands within one tick.
    expect(byId['bench-1'].e2eMs).toBeNull();
    expect(out.stats.errors).toMatchObject({ connect: 1, firstTokenTimeout: 1, stall: 1 });
  });

  it('completes requests on time and reports progress with the running token rate', async () => {
    const ok: Step = (f, st) => {
      f.phase = 'first';
      setTimeout(() => {
        f.timeline.onFrames(1, Date.now());
        f.scanner.done = true;
        f.scanner.completionTokens = 10;
        st.finishStream();
      }, 100);
    };
    const events: BenchEvent[] = [];
    const level = runLevel(context(fakeTransport([ok]), events), 2, { requests: 6, durationMs: null }, true);
    await vi.advanceTimersByTimeAsync(1000);
    const out = await level;
    expect(out.stats.ok).toBe(6);
    expect(out.stats.durationMs()).toBe(300);
    expect(out.samples.every((s) => s.ttftMs === 100 && s.outputTokens === 10)).toBe(true);
    expect(events.some((e) => e.type === 'bench:progress')).toBe(true);
  });
});

describe('a server that refuses the connection', () => {
  it('stops an open loop at 0.001 req/s at the first refusal, not at the next arrival 1000 s later (fuzz: bench --rate 0.001 hung)', async () => {
    const refused: Step = (_f, st) => {
      setTimeout(() => st.finish(false, 'connect', 'ECONNREFUSED: connect to 127.0.0.1:9 failed'), 5);
    };
    const events: BenchEvent[] = [];
    const ctx = context(fakeTransport([refused]), events);
    ctx.opts.rate = 0.001;
    const level = runLevel(ctx, 4, { requests: 16, durationMs: null }, true);
    let settled = false;
    void level.then(() => {
      settled = true;
    });
    await vi.advanceTimersByTimeAsync(100);
    expect(settled).toBe(true);
    const out = await level;
    expect(out.stats).toMatchObject({ ok: 0, failed: 1, lastErrorPhase: 'connect' });
    expect(events.find((e) => e.type === 'bench:stopped')).toMatchObject({
      reason: expect.stringContaining('the server refused the connection'),
    });
  });
});
