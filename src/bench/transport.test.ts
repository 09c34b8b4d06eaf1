import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { planRequest } from './api.js';
import { createNodeTransport } from './node-transport.js';
import { createNativeTransport, loadNativeReader } from './native-transport.js';
import { createBatchClock, createRawTransport } from './raw-transport.js';
import { createTransport, type Transport } from './transport.js';

interface FakeServer {
  url: string;
  close(): Promise<void>;
}
const FAKE = '../../test/fakes/sse-server.js';
const { startSseServer } = (await import(/* @vite-ignore */ FAKE)) as {
  startSseServer: (s: (r: unknown, n: number) => object) => Promise<FakeServer>;
};

// Each case runs twice (two requests) so the second rides a kept-alive connection.
const CASES: [string, object, object][] = [
  ['ok', { frames: 5, itlMs: 1 }, { ok: true, completionTokens: 5, promptTokens: 7 }],
  ['ok byte by byte', { frames: 3, itlMs: 1, byteByByte: true }, { ok: true, completionTokens: 3 }],
  [
    'HTTP 500',
    { status: 500 },
    {
      ok: false,
      errorPhase: 'httpStatus',
      error: expect.stringContaining('HTTP 500: {"error":{"message":"scripted 500"}}'),
    },
  ],
  ['socket destroyed', { frames: 5, endAfterFrames: 2 }, { ok: false, errorPhase: 'endedEarly' }],
  [
    'no [DONE]',
    { frames: 5, finishWithoutDoneAfter: 2 },
    { ok: false, errorPhase: 'endedEarly', error: expect.stringContaining('before [DONE] after 2') },
  ],
];

let server: FakeServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

const noText: Transport['getText'] = async () => null;

// The native reader is built by `npm ci` (prepare) and by the test command; a missing build is a failure here.
it('the native reader is built', () => {
  expect(loadNativeReader().why).toBe('');
});

describe.each([
  ['native reader', createNativeTransport],
  ['raw sockets', createRawTransport],
  ['node:http', createNodeTransport],
])('transport on %s', (_name, create) => {
  it.each(CASES)('%s', async (_c, script, expected) => {
    server = await startSseServer(() => script);
    const base = new URL(server.url);
    const t = create(base, noText);
    const url = new URL('/v1/chat/completions', base);
    try {
      for (const n of [1, 2]) {
        const plan = planRequest('chat', null, { text: 'hi' }, `bench-${n}`, 5, null);
        const f = t.send(url, plan, `bench-${n}`, () => performance.now(), 8, null);
        expect(await f.done).toMatchObject({ id: `bench-${n}`, ...expected });
      }
    } finally {
      t.close();
    }
  });
});

describe('createBatchClock', () => {
  it('gives every read of one event-loop turn the first reading, for at most 2 ms', async () => {
    let t = 100;
    const clock = createBatchClock(() => t);
    expect(clock()).toBe(100);
    t = 101.5;
    expect(clock()).toBe(100);
    t = 102.5;
    expect(clock()).toBe(102.5);
    await new Promise((r) => setImmediate(r));
    t = 103;
    expect(clock()).toBe(103);
  });
});

describe('native reader', () => {
  it('stamps tokens when they arrive, even while the event loop is blocked', async () => {
    // The server runs in its own process (blocking this event loop must not hold its tokens back) and prints
    // when it sent each frame: the reference for the gaps the client measures.
    const child = spawn(
      process.execPath,
      [fileURLToPath(new URL('../../test/fakes/paced-sse-server.mjs', import.meta.url)), '20', '20', '10'],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    onTestFinished(() => {
      child.kill();
    });
    const lines = createInterface({ input: child.stdout });
    const nextLine = (): Promise<string> => new Promise((r) => lines.once('line', r));
    const base = new URL(`http://127.0.0.1:${await nextLine()}`);
    const url = new URL('/v1/chat/completions', base);
    // Worst difference between the client's gaps and the server's, with the event loop blocked for 120 ms mid-stream.
    const worstError = async (create: typeof createNativeTransport): Promise<number> => {
      const t = create(base, noText);
      try {
        const sent = nextLine();
        const plan = planRequest('chat', null, { text: 'hi' }, 'bench-1', 20, null);
        const f = t.send(url, plan, 'bench-1', () => performance.now(), 22, null);
        while (f.timeline.frames < 2) await new Promise((r) => setTimeout(r, 1));
        const until = performance.now() + 120;
        while (performance.now() < until) {
          /* busy */
        }
        expect(await f.done).toMatchObject({ ok: true });
        const times = JSON.parse(await sent) as number[];
        const gaps = Array.from(f.timeline.gaps.subarray(0, f.timeline.nGaps));
        expect(gaps).toHaveLength(times.length - 1);
        return Math.max(...gaps.map((g, i) => Math.abs(g - (times[i + 1] - times[i]))));
      } finally {
        t.close();
      }
    };
    // JS sockets see the blocked loop: tokens pile up and are stamped together, tens of ms off.
    expect(await worstError(createRawTransport)).toBeGreaterThan(80);
    // The reader thread took the kernel's receive time: every gap matches the server's (typically to 0.3 ms;
    // the margin is for a loaded CI machine descheduling the server between its clock reading and its write).
    expect(await worstError(createNativeTransport)).toBeLessThan(30);
  });

  it('reports a refused connection as a connect error', async () => {
    const t = createNativeTransport(new URL('http://127.0.0.1:1'), noText);
    try {
      const plan = planRequest('chat', null, { text: 'hi' }, 'bench-1', 5, null);
      const f = t.send(
        new URL('http://127.0.0.1:1/v1/chat/completions'),
        plan,
        'bench-1',
        () => performance.now(),
        8,
        null,
      );
      expect(await f.done).toMatchObject({
        ok: false,
        errorPhase: 'connect',
        error: expect.stringContaining('ECONNREFUSED'),
      });
    } finally {
      t.close();
    }
  });

  it('names an unknown host in one line', () => {
    expect(() => createNativeTransport(new URL('http://no-such-host.invalid:80'), noText)).toThrow(
      /no-such-host\.invalid/,
    );
    expect(() => createTransport(new URL('http://no-such-host.invalid:80'), 'native')).toThrow(
      expect.objectContaining({
        code: 'E_BENCH_FAILED',
        message: expect.stringContaining('cannot resolve no-such-host.invalid'),
      }),
    );
  });
});
