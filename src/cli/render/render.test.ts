import { describe, expect, it } from 'vitest';
import type { SpectuneEvent } from '../../tune/events.js';
import { tagRankEvents } from '../../service/events.js';
import { chooseRenderMode, createJsonRenderer, createPlainRenderer, createTtyRenderer } from './index.js';

// A fake output stream that keeps what was written.
function fakeOut() {
  const chunks: string[] = [];
  return {
    chunks,
    write: (s: string) => {
      chunks.push(s);
      return true;
    },
    text: () => chunks.join(''),
  };
}

const START: SpectuneEvent = {
  type: 'trial:start',
  ts: 1000,
  campaignId: 1,
  trial: 2,
  config: { speculative_num_steps: 4 },
  reason: 'climb',
};
const PHASE: SpectuneEvent = { type: 'trial:phase', ts: 1500, trial: 2, phase: 'bench', expectedMs: 20_000 };
const END: SpectuneEvent = { type: 'trial:end', ts: 9000, trial: 2, status: 'ok', objective: 277.4, verdict: null };

describe('renderers', () => {
  it('plain: one line per event with elapsed time, progress at its first sight of a level', () => {
    const out = fakeOut();
    const r = createPlainRenderer(out);
    for (const e of [
      START,
      PHASE,
      { type: 'bench:progress', ts: 2000, concurrency: 1, done: 1, total: 4, outputTokensPerSec: 10 } as SpectuneEvent,
      END,
    ])
      r.onEvent(e);
    const lines = out.text().trim().split('\n');
    expect(lines).toEqual([
      '[  +0.0s] trial 2: speculative_num_steps=4 (climb)',
      '[  +0.5s] trial 2: bench (expected ~20.0s)',
      '[  +1.0s] bench c=1 1/4 requests, ETA 1.5s',
      '[  +8.0s] trial 2: ok objective=277.4',
    ]);
  });

  it("plain: every progress line of a group's rank names its rank and host", () => {
    const out = fakeOut();
    const r = createPlainRenderer(out);
    const sink = tagRankEvents((e) => r.onEvent(e), 1, 'th2');
    sink({
      type: 'service:action',
      ts: 0,
      host: 'th2',
      unit: 'u.service',
      action: 'restart',
      why: 'restart with rank0',
    });
    sink({
      type: 'service:state',
      ts: 100,
      unit: 'u.service',
      activeState: 'activating',
      subState: 'start',
      mainPid: 7,
      nRestarts: 0,
    });
    sink({ type: 'log', ts: 200, level: 'warn', message: 'u.service: waiting for 2 running and 0 queued requests' });
    sink({ type: 'service:ready', ts: 300, unit: 'u.service', elapsedMs: 1500 });
    expect(out.text().trim().split('\n')).toEqual([
      '[  +0.0s] service rank1 th2 u.service: restart (restart with rank0)',
      '[  +0.1s] service rank1 th2 u.service: activating/start pid=7 systemd NRestarts=0',
      '[  +0.2s] warn: rank1 th2: u.service: waiting for 2 running and 0 queued requests',
      '[  +0.3s] service rank1 th2 u.service: ready after 1.5s',
    ]);
  });

  it('json: NDJSON with secrets redacted', () => {
    const out = fakeOut();
    createJsonRenderer(out).onEvent({
      type: 'log',
      ts: 1,
      level: 'info',
      message: 'ExecStart=sim --api-key sk-abcdefghijklmnopqrstu',
    });
    const parsed = JSON.parse(out.text()) as { message: string };
    expect(parsed.message).not.toContain('sk-abcdefghijklmnop');
  });

  it('tty: live line shows phase, elapsed vs expected and best; permanent lines clear it', () => {
    const out = { ...fakeOut(), columns: 200 };
    let now = 1000;
    const r = createTtyRenderer(out, { now: () => now, tick: false });
    r.onEvent(START);
    now = 1500;
    r.onEvent(PHASE);
    r.onEvent({ type: 'campaign:best', ts: 1600, trial: 1, config: { speculative_num_steps: 3 }, objective: 234 });
    now = 4000;
    r.onEvent({ type: 'bench:progress', ts: 4000, concurrency: 1, done: 2, total: 4, outputTokensPerSec: 200 });
    r.close();
    const text = out.chunks.join('');
    expect(text).toContain(
      'trial 2 speculative_num_steps=4 [bench 2.5s / ~20.0s c=1 2/4 requests, ETA 2.5s] | best 234.0 (speculative_num_steps=3)',
    );
    expect(text).toContain('best so far: trial 1');
  });

  it('tty: redraws are rate limited', () => {
    const out = fakeOut();
    const r = createTtyRenderer(out, { now: () => 5000, tick: false });
    r.onEvent(START);
    const before = out.chunks.length;
    for (let i = 0; i < 50; i++)
      r.onEvent({ type: 'bench:progress', ts: 5000, concurrency: 1, done: i, total: 50, outputTokensPerSec: 1 });
    expect(out.chunks.length - before).toBe(0);
  });

  it('shows every objective with its unit, and says why a per-request rate tops the total (issue 19)', () => {
    const out = fakeOut();
    const r = createPlainRenderer(out);
    r.onEvent({ ...END, unit: 'tok/s per request' } as SpectuneEvent);
    r.onEvent({
      type: 'campaign:best',
      ts: 9000,
      trial: 2,
      config: { speculative_num_steps: 4 },
      objective: 277.4,
      unit: 'tok/s per request',
    });
    const level = (total: number, per: number) =>
      ({
        type: 'bench:level',
        ts: 9000,
        run: {
          concurrency: 1,
          outputTokensPerSec: total,
          decodeTokensPerSec: { mean: per },
          requests: { ok: 4, failed: 0 },
        },
      }) as unknown as SpectuneEvent;
    r.onEvent(level(201.3, 277.4));
    r.onEvent(level(880, 60.2));
    const lines = out
      .text()
      .trim()
      .split('\n')
      .map((l) => l.replace(/^\[[^\]]*\] /, ''));
    expect(lines).toEqual([
      'trial 2: ok objective=277.4 tok/s per request',
      'best so far: trial 2 speculative_num_steps=4 objective=277.4 tok/s per request',
      'bench c=1: 201.3 tok/s total, 277.4 tok/s per request (decode only: excludes time to first token and queueing, which the total includes), ok=4 failed=0',
      'bench c=1: 880.0 tok/s total, 60.2 tok/s per request, ok=4 failed=0',
    ]);
  });

  it('start banner, request progress with ETA and budget left; piped: a progress line only every 10 s or on a new level (issue 19)', () => {
    const out = fakeOut();
    const r = createPlainRenderer(out);
    r.onEvent({
      type: 'campaign:start',
      ts: 0,
      campaignId: 7,
      resumed: false,
      store: '/srv/tune.db',
      budget: { maxTrials: 12, maxHours: 1 },
      trialsDone: 0,
      activeMs: 0,
    });
    r.onEvent({ type: 'trial:end', ts: 60_000, trial: 1, status: 'ok', objective: 234, verdict: null });
    r.onEvent({ type: 'trial:phase', ts: 60_000, trial: 2, phase: 'bench', expectedMs: null });
    for (let i = 1; i <= 20; i++)
      r.onEvent({
        type: 'bench:progress',
        ts: 60_000 + i * 1000,
        concurrency: 1,
        done: i,
        total: 40,
        outputTokensPerSec: 10,
      });
    r.onEvent({ type: 'bench:progress', ts: 82_000, concurrency: 16, done: 1, total: 64, outputTokensPerSec: 10 });
    const lines = out
      .text()
      .trim()
      .split('\n')
      .map((l) => l.replace(/^\[[^\]]*\] /, ''));
    expect(lines[0]).toBe('campaign 7 started, store /srv/tune.db: budget 12 trials, 1 h of running time');
    expect(lines.filter((l) => l.startsWith('bench '))).toEqual([
      'bench c=1 1/40 requests, ETA 39.0s | budget left: 11 trials, 58m59s',
      'bench c=1 11/40 requests, ETA 29.0s | budget left: 11 trials, 58m49s',
      'bench c=16 1/64 requests, ETA 2m06s | budget left: 11 trials, 58m38s',
    ]);
  });

  it('chooses json, then tty, then plain', () => {
    expect(chooseRenderMode({ json: true, isTTY: true, env: {} })).toBe('json');
    expect(chooseRenderMode({ json: false, isTTY: true, env: {} })).toBe('tty');
    expect(chooseRenderMode({ json: false, isTTY: true, env: { CI: '1' } })).toBe('plain');
    expect(chooseRenderMode({ json: false, isTTY: false, env: {} })).toBe('plain');
  });
});

describe('the drain countdown', () => {
  const DRAIN: SpectuneEvent = {
    type: 'service:drain',
    ts: 10_000,
    unit: 'u.service',
    running: 2,
    queued: 1,
    waitedMs: 0,
    deadlineTs: 10_000 + 600_000,
    note: null,
  };
  it('tty: one live line that counts down by itself and is gone once the restart goes on', () => {
    const out = { ...fakeOut(), columns: 400 };
    let now = 10_000;
    const r = createTtyRenderer(out, { now: () => now, tick: false });
    r.onEvent(START);
    now += 200;
    r.onEvent(DRAIN);
    expect(out.chunks.at(-1)).toContain(
      '| service u.service: draining before the stop: 2 running, 1 queued; stopping anyway in 10m00s (--drain-timeout)',
    );
    now += 61_000;
    r.onEvent({ type: 'trial:phase', ts: now, trial: 2, phase: 'deploy', expectedMs: null });
    expect(out.chunks.at(-1)).toContain('stopping anyway in 8m59s');
    expect(out.chunks.filter((c) => c.includes('draining')).every((c) => !c.endsWith('\n'))).toBe(true);
    r.onEvent({ type: 'service:action', ts: now, host: 'h', unit: 'u.service', action: 'restart', why: 'x' });
    expect(out.chunks.at(-1)).not.toContain('draining');
  });
});
