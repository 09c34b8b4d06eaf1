// The start-up deadline: a start that hangs (activating forever, or active while /health never answers) fails
// with E_TIMEOUT naming what was seen last, is stopped, and rolls back; progress goes through the event stream.
import { describe, expect, it } from 'vitest';
import type { SpectuneEvent } from '../../src/tune/events.js';
import type { HealthResult } from '../../src/service/health.js';
import { createProgressReporter } from '../../src/service/progress.js';
import { createTracker, watchStart, type Baseline, type WatchContext } from '../../src/service/readiness.js';
import { DEFAULT_READY_TIMEOUT_MS, ReadyTimeoutError } from '../../src/service/start-deadline.js';
import { FakeHost } from '../fakes/fake-host.js';
import { DROPIN, ScriptedSystemd, UNIT, controllerFor, prober } from './service-fakes.js';

const READY_LINE = 'The server is fired up and ready to roll!';

describe('start-up deadline of the controller', () => {
  it('gives up on a start stuck in activating: E_TIMEOUT with the last state, health answer and journal line, then stops it', async () => {
    const sd = new ScriptedSystemd();
    sd.script = [() => {}, () => {}, (s) => s.log(100, 'Load weight begin. avail mem=78.12 GB')];
    const events: SpectuneEvent[] = [];
    const { c, actionLog } = controllerFor(sd, prober(false), events, { readyTimeoutMs: 150 });
    await c.restart('test');
    const t0 = Date.now();
    const r = await c.waitReady();
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(r.status).toBe('failed');
    if (r.status !== 'failed') return;
    expect(r.error).toBeInstanceOf(ReadyTimeoutError);
    expect(r.error?.code).toBe('E_TIMEOUT');
    expect(r.error?.lastSeen).toMatchObject({
      activeState: 'activating',
      subState: 'start',
      mainPid: 100,
      journalLine: 'Load weight begin. avail mem=78.12 GB',
      health: { status: 503 },
    });
    expect(r.error?.message).toMatch(
      /not ready 0 s after its start .*activating\/start, main PID 100; health http:\/\/10\.0\.0\.2:30000\/health -> 503; last journal line: "Load weight begin/,
    );
    expect(r.error?.hint).toMatch(/--ready-timeout/);
    expect(r.reason).toBe(r.error?.message);
    expect(r.verdict.summary).toContain('start-up deadline');
    expect(r.looping).toBe(false);
    // (the stop's journal is read in between, for a stop timeout)
    expect(
      sd.host
        .execs()
        .filter((a) => a[0] === 'systemctl')
        .slice(-2),
    ).toEqual([
      ['systemctl', 'stop', UNIT],
      ['systemctl', 'reset-failed', UNIT],
    ]);
    expect(actionLog.records.map((a) => a.action)).toEqual(['restart', 'stop']);
    expect(actionLog.records[1].why).toMatch(/deadline/);
    const failed = events.find((e) => e.type === 'service:failed');
    expect(failed && failed.type === 'service:failed' ? failed.reason : '').toMatch(/activating\/start/);
    expect(events.filter((e) => e.type === 'service:state')).toHaveLength(1);
  });

  it('gives up on a unit active (running) with its ready line whose /health never answers 200', async () => {
    const sd = new ScriptedSystemd();
    sd.script = [
      () => {},
      () => {},
      (s) => {
        s.log(100, READY_LINE);
        s.state = { active: 'active', sub: 'running', pid: 100, restarts: 0 };
      },
    ];
    const { c } = controllerFor(sd, prober(false));
    await c.restart('test');
    const r = await c.waitReady({ timeoutMs: 100 });
    expect(r.status).toBe('failed');
    if (r.status !== 'failed') return;
    expect(r.error?.lastSeen).toMatchObject({
      activeState: 'active',
      subState: 'running',
      journalLine: READY_LINE,
      health: { ok: false, status: 503 },
    });
    expect(sd.state.active).toBe('inactive');
  });

  it('takes the failed-start path: apply, deadline, stop, rollback to the known-good drop-in and its verified start', async () => {
    const sd = new ScriptedSystemd();
    let hang = true;
    sd.host.on(['systemctl', 'restart'], () => {
      sd.state = hang
        ? { active: 'activating', sub: 'start', pid: 100, restarts: 0 }
        : { active: 'active', sub: 'running', pid: 300, restarts: 0 };
      if (!hang) sd.log(300, READY_LINE);
      hang = false;
      return {};
    });
    const healthOf = async (url: string): Promise<HealthResult> => ({
      ok: sd.state.pid === 300,
      status: sd.state.pid === 300 ? 200 : null,
      error: sd.state.pid === 300 ? null : 'ECONNREFUSED',
      url,
    });
    const { c, actionLog } = controllerFor(sd, { ...prober(false), health: healthOf }, [], { readyTimeoutMs: 100 });
    await c.apply(await c.plan({ speculative_num_steps: 10 }));
    const r = await c.waitReady();
    expect(r.status === 'failed' && r.error?.code).toBe('E_TIMEOUT');
    expect(await c.rollback()).toMatchObject({ status: 'rolled_back', version: 'none' });
    expect(sd.host.files.has(DROPIN)).toBe(false);
    expect(actionLog.records.map((a) => a.action)).toEqual(['deploy', 'restart', 'stop', 'rollback', 'restart']);
  });

  it('applies the deadline to the rollback start too (E_ROLLBACK_FAILED)', async () => {
    const sd = new ScriptedSystemd();
    sd.host.files.set(`/var/lib/spectune/${UNIT}/good`, 'none\n');
    const { c } = controllerFor(sd, prober(false));
    await expect(c.rollback({ readyTimeoutMs: 80 })).rejects.toMatchObject({
      code: 'E_ROLLBACK_FAILED',
      message: expect.stringMatching(/start-up deadline/),
    });
  });

  it('refuses a deadline that is not a positive duration', async () => {
    const sd = new ScriptedSystemd();
    expect(() => controllerFor(sd, prober(true), [], { readyTimeoutMs: 0 })).toThrow(
      expect.objectContaining({ code: 'E_USAGE' }),
    );
    await expect(controllerFor(sd, prober(true)).c.waitReady({ timeoutMs: -1 })).rejects.toMatchObject({
      code: 'E_USAGE',
    });
    expect(sd.host.calls).toEqual([]);
  });

  it('does not cut short a failure being confirmed at the deadline: the crash verdict wins', async () => {
    const sd = new ScriptedSystemd();
    sd.script = [
      () => {},
      () => {},
      (s) => {
        s.log(100, 'RuntimeError: Not enough memory.');
        s.state = { active: 'activating', sub: 'auto-restart', pid: 0, restarts: 0, result: 'exit-code' };
      },
      (s) => {
        s.state = { active: 'activating', sub: 'start', pid: 101, restarts: 1 };
      },
    ];
    const { c } = controllerFor(sd, prober(false), [], { readyTimeoutMs: 1 });
    await c.restart('test');
    const r = await c.waitReady();
    expect(r.status === 'failed' && r.error).toBeUndefined();
    expect(r.status === 'failed' && r.verdict.class).toBe('crash_loop');
  });
});

describe('watchStart deadline on a fake clock', () => {
  // A watcher context whose sleep advances a fake clock; the unit hangs in activating.
  function hungContext(now: { ms: number }, health: HealthResult): WatchContext & { sleeps: number[] } {
    const host = new FakeHost();
    host.on(['systemctl', 'show'], {
      stdout: `Id=${UNIT}\nLoadState=loaded\nActiveState=activating\nSubState=start\nMainPID=100\nNRestarts=0\nRestart=always\n`,
    });
    host.on(['journalctl', '-u'], { stdout: '' });
    const sleeps: number[] = [];
    return {
      host,
      unit: UNIT,
      healthUrl: health.url,
      readyPattern: /ready to roll/,
      isFatal: () => false,
      health: async () => health,
      sleep: async (ms) => {
        sleeps.push(ms);
        now.ms += ms;
      },
      now: () => now.ms,
      pollMs: 1000,
      sleeps,
    };
  }
  const base: Baseline = { mainPid: 100, nRestarts: 0, cursor: null, clockOffsetMs: 0, startedAt: 0, sawStart: true };

  it('ends exactly at the deadline (the last sleep is shortened) and probes health once for the record', async () => {
    const now = { ms: 0 };
    const ctx = hungContext(now, { ok: false, status: null, error: 'ECONNREFUSED', url: 'http://h:30000/health' });
    const out = await watchStart({ ...ctx, deadlineMs: DEFAULT_READY_TIMEOUT_MS + 500 }, base);
    expect(out).toMatchObject({ status: 'timeout', elapsedMs: DEFAULT_READY_TIMEOUT_MS + 500 });
    expect(out.tracker.lastHealth?.error).toBe('ECONNREFUSED');
    expect(ctx.sleeps.at(-1)).toBe(500);
    expect(ctx.sleeps).toHaveLength(DEFAULT_READY_TIMEOUT_MS / 1000 + 1);
  });

  it('has no deadline in monitor mode', async () => {
    const now = { ms: 0 };
    const ctx = hungContext(now, { ok: true, status: 200, error: null, url: 'http://h/health' });
    expect((await watchStart({ ...ctx, deadlineMs: 1000, monitorMs: 5000 }, base)).status).toBe('stable');
  });
});

describe('progress of a slow start', () => {
  it('emits service:state on each change and one line a minute with the deadline left', () => {
    const events: SpectuneEvent[] = [];
    const now = { ms: 0 };
    const report = createProgressReporter({
      unit: UNIT,
      onEvent: (e) => events.push(e),
      now: () => now.ms,
      deadlineMs: 20 * 60_000,
    });
    const t = createTracker({
      mainPid: null,
      nRestarts: 0,
      cursor: null,
      clockOffsetMs: 0,
      startedAt: 0,
      sawStart: true,
    });
    const state = (activeState: string, subState: string) => ({
      id: UNIT,
      loadState: 'loaded',
      activeState,
      subState,
      result: 'success',
      mainPid: 100,
      nRestarts: 0,
      timeoutStopMs: null,
      restart: 'always',
      execMainStatus: null,
      fragmentPath: '',
      dropInPaths: [],
      invocationId: '',
      raw: '',
    });
    t.state = state('activating', 'start');
    for (now.ms = 0; now.ms <= 150_000; now.ms += 250) {
      if (now.ms === 100_000) t.state = state('active', 'running');
      report(t);
    }
    expect(
      events.filter((e) => e.type === 'service:state').map((e) => e.type === 'service:state' && e.activeState),
    ).toEqual(['activating', 'active']);
    const lines = events.flatMap((e) => (e.type === 'log' ? [e.message] : []));
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe(
      `${UNIT}: not ready after 60 s (activating/start, main PID 100; health not probed; no journal line since the start); start-up deadline in 1140 s`,
    );
    expect(lines[1]).toMatch(/not ready after 120 s \(active\/running/);
  });

  it('says nothing but state changes when monitoring', () => {
    const events: SpectuneEvent[] = [];
    const report = createProgressReporter({ unit: UNIT, onEvent: (e) => events.push(e), now: () => 10 * 60_000 });
    report(
      createTracker({ mainPid: null, nRestarts: 0, cursor: null, clockOffsetMs: 0, startedAt: 0, sawStart: true }),
    );
    expect(events).toEqual([]);
  });
});
