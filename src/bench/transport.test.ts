import { afterEach, describe, expect, it } from 'vitest';
import { planRequest } from './api.js';
import { createNodeTransport } from './node-transport.js';
import { createBatchClock, createRawTransport } from './raw-transport.js';
import type { Transport } from './transport.js';

interface FakeServer { url: string; close(): Promise<void> }
const FAKE = '../../test/fakes/sse-server.js';
const { startSseServer } = (await import(/* @vite-ignore */ FAKE)) as { startSseServer: (s: (r: unknown, n: number) => object) => Promise<FakeServer> };

// Each case runs twice (two requests) so the second rides a kept-alive connection.
const CASES: [string, object, object][] = [
  ['ok', { frames: 5, itlMs: 1 }, { ok: true, completionTokens: 5, promptTokens: 7 }],
  ['ok byte by byte', { frames: 3, itlMs: 1, byteByByte: true }, { ok: true, completionTokens: 3 }],
  ['HTTP 500', { status: 500 }, { ok: false, errorPhase: 'httpStatus', error: expect.stringContaining('HTTP 500: {"error":{"message":"scripted 500"}}') }],
  ['socket destroyed', { frames: 5, endAfterFrames: 2 }, { ok: false, errorPhase: 'endedEarly' }],
  ['no [DONE]', { frames: 5, finishWithoutDoneAfter: 2 }, { ok: false, errorPhase: 'endedEarly', error: expect.stringContaining('before [DONE] after 2') }],
];

let server: FakeServer | null = null;
afterEach(async () => { await server?.close(); server = null; });

const noText: Transport['getText'] = async () => null;

describe.each([
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
