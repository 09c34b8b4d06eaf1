import { describe, expect, it } from 'vitest';
import type { SpectuneEvent } from '../../tune/events.js';
import { tagRankEvents } from '../../service/events.js';
import { chooseRenderMode, createJsonRenderer, createPlainRenderer, createTtyRenderer } from './index.js';

// A fake output stream that keeps what was written.
function fakeOut() {
  const chunks: string[] = [];
  return { chunks, write: (s: string) => { chunks.push(s); return true; }, text: () => chunks.join('') };
}

const START: SpectuneEvent = { type: 'trial:start', ts: 1000, campaignId: 1, trial: 2, config: { speculative_num_steps: 4 }, reason: 'climb' };
const PHASE: SpectuneEvent = { type: 'trial:phase', ts: 1500, trial: 2, phase: 'bench', expectedMs: 20_000 };
const END: SpectuneEvent = { type: 'trial:end', ts: 9000, trial: 2, status: 'ok', objective: 277.4, verdict: null };

describe('renderers', () => {
  it('plain: one line per event with elapsed time, progress dropped', () => {
    const out = fakeOut();
    const r = createPlainRenderer(out);
    for (const e of [START, PHASE, { type: 'bench:progress', ts: 2000, concurrency: 1, done: 1, total: 4, outputTokensPerSec: 10 } as SpectuneEvent, END]) r.onEvent(e);
    const lines = out.text().trim().split('\n');
    expect(lines).toEqual([
      '[  +0.0s] trial 2: speculative_num_steps=4 (climb)',
      '[  +0.5s] trial 2: bench (expected ~20.0s)',
      '[  +8.0s] trial 2: ok objective=277.4',
    ]);
  });

  it('plain: every progress line of a group\'s rank names its rank and host', () => {
    const out = fakeOut();
    const r = createPlainRenderer(out);
    const sink = tagRankEvents((e) => r.onEvent(e), 1, 'th2');
    sink({ type: 'service:action', ts: 0, host: 'th2', unit: 'u.service', action: 'restart', why: 'restart with rank0' });
    sink({ type: 'service:state', ts: 100, unit: 'u.service', activeState: 'activating', subState: 'start', mainPid: 7, nRestarts: 0 });
    sink({ type: 'log', ts: 200, level: 'warn', message: 'u.service: waiting for 2 running and 0 queued requests' });
    sink({ type: 'service:ready', ts: 300, unit: 'u.service', elapsedMs: 1500 });
    expect(out.text().trim().split('\n')).toEqual([
      '[  +0.0s] service rank1 th2 u.service: restart (restart with rank0)',
      '[  +0.1s] service rank1 th2 u.service: activating/start pid=7 restarts=0',
      '[  +0.2s] warn: rank1 th2: u.service: waiting for 2 running and 0 queued requests',
      '[  +0.3s] service rank1 th2 u.service: ready after 1.5s',
    ]);
  });

  it('json: NDJSON with secrets redacted', () => {
    const out = fakeOut();
    createJsonRenderer(out).onEvent({ type: 'log', ts: 1, level: 'info', message: 'ExecStart=sim --api-key sk-abcdefghijklmnopqrstu' });
    const parsed = JSON.parse(out.text()) as { message: string };
    expect(parsed.message).not.toContain('sk-abcdefghijklmnop');
  });

  it('tty: live line shows phase, elapsed vs expected and best; permanent lines clear it', () => {
    const out = { ...fakeOut(), columns: 200 };
    let now = 1000;
    const r = createTtyRenderer(out, { now: () => now, tick: false });
    r.onEvent(START);
    now = 1500; r.onEvent(PHASE);
    r.onEvent({ type: 'campaign:best', ts: 1600, trial: 1, config: { speculative_num_steps: 3 }, objective: 234 });
    now = 4000; r.onEvent({ type: 'bench:progress', ts: 4000, concurrency: 1, done: 2, total: 4, outputTokensPerSec: 200 });
    r.close();
    const text = out.chunks.join('');
    expect(text).toContain('trial 2 speculative_num_steps=4 [bench 2.5s / ~20.0s c=1 2/4] | best 234.0 (speculative_num_steps=3)');
    expect(text).toContain('best so far: trial 1');
  });

  it('tty: redraws are rate limited', () => {
    const out = fakeOut();
    const r = createTtyRenderer(out, { now: () => 5000, tick: false });
    r.onEvent(START);
    const before = out.chunks.length;
    for (let i = 0; i < 50; i++) r.onEvent({ type: 'bench:progress', ts: 5000, concurrency: 1, done: i, total: 50, outputTokensPerSec: 1 });
    expect(out.chunks.length - before).toBe(0);
  });

  it('chooses json, then tty, then plain', () => {
    expect(chooseRenderMode({ json: true, isTTY: true, env: {} })).toBe('json');
    expect(chooseRenderMode({ json: false, isTTY: true, env: {} })).toBe('tty');
    expect(chooseRenderMode({ json: false, isTTY: true, env: { CI: '1' } })).toBe('plain');
    expect(chooseRenderMode({ json: false, isTTY: false, env: {} })).toBe('plain');
  });
});
