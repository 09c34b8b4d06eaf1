// The service controller against a scripted systemd (FakeHost): deploy, readiness, crash loop, rollback, refusals.
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { EngineMetrics } from '../../src/engines/types.js';
import type { SpectuneEvent } from '../../src/tune/events.js';
import { createServiceController } from '../../src/service/controller.js';
import { sleep } from '../../src/service/sleep.js';
import { FakeHost } from '../fakes/fake-host.js';
import { DROPIN, EXEC, FATAL, ScriptedSystemd, UNIT, collaborators, controllerFor, prober } from './service-fakes.js';

describe('service controller', () => {
  it('deploys a drop-in, restarts, and is ready after the ready line and a 200 health answer', async () => {
    const sd = new ScriptedSystemd();
    sd.script = [
      () => {},
      () => {},
      (s) => s.log(100, 'Load weight begin.'),
      (s) => {
        s.log(100, 'The server is fired up and ready to roll!');
        s.state = { active: 'active', sub: 'running', pid: 100, restarts: 0 };
      },
    ];
    const { c, actionLog } = controllerFor(sd, prober(true));
    const plan = await c.plan({ speculative_num_steps: 4 });
    await c.apply(plan);
    expect(sd.host.files.get(DROPIN)).toContain('--speculative-num-steps 4');
    expect(sd.host.files.get(`/var/lib/spectune/${UNIT}/dropins/1.conf`)).toBe(plan.dropInText);
    expect(sd.host.files.get(`/var/lib/spectune/${UNIT}/good`)).toBe('none\n');
    const r = await c.waitReady();
    expect(r.status).toBe('ready');
    await c.markGood();
    expect(sd.host.files.get(`/var/lib/spectune/${UNIT}/good`)).toBe('1\n');
    expect(actionLog.records.map((a) => `${a.action}:${a.by}`)).toEqual(['deploy:spectune', 'restart:spectune']);
    expect(sd.host.unmatched).toEqual([]);
    expect(await c.currentSettings()).toMatchObject({ speculative_num_steps: 4 });
    expect(await c.readExecStarts()).toEqual({
      operator: EXEC,
      inForce: plan.newExecStart,
      dropIn: plan.dropInText,
      dropInPath: DROPIN,
    });
    expect(plan.newExecStart).toContain('--speculative-num-steps 4');
  });

  it('follows a worker rank (no ready line, no HTTP) as running: up after its watch window, or its failure diagnosed', async () => {
    const sd = new ScriptedSystemd();
    sd.script = [
      () => {},
      () => {},
      (s) => {
        s.log(100, 'Load weight begin.');
        s.state = { active: 'active', sub: 'running', pid: 100, restarts: 0 };
      },
    ];
    const { c } = controllerFor(sd, prober(false));
    await c.apply(await c.plan({ speculative_num_steps: 4 }));
    const t0 = Date.now();
    const up = await c.waitRunning({ windowMs: 300 });
    expect(up.status).toBe('ready');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(300);
    const sd2 = new ScriptedSystemd();
    sd2.script = [
      () => {},
      () => {},
      (s) => s.log(100, FATAL),
      (s) => {
        s.state = { active: 'failed', sub: 'failed', pid: 0, restarts: 0, result: 'exit-code' };
        s.log(1, `${UNIT}: Main process exited, code=exited, status=1/FAILURE`, 'systemd');
      },
    ];
    const { c: c2 } = controllerFor(sd2, prober(false));
    await c2.apply(await c2.plan({ speculative_num_steps: 10 }));
    const failed = await c2.waitRunning({ windowMs: 10_000 });
    expect(failed.status).toBe('failed');
    if (failed.status === 'failed') expect(failed.verdict.class).toBe('kv_cache_oom');
  });

  it('reports a crash loop with its cause as soon as the unit restarts after a fatal line, then stops the loop', async () => {
    const sd = new ScriptedSystemd();
    sd.script = [
      () => {},
      () => {},
      (s) => s.log(100, 'Load weight begin.'),
      (s) => {
        s.log(100, 'Traceback (most recent call last):');
        s.log(100, FATAL);
        s.state = { active: 'activating', sub: 'auto-restart', pid: 0, restarts: 0, result: 'exit-code' };
        s.log(1, `${UNIT}: Main process exited, code=exited, status=1/FAILURE`, 'systemd');
      },
      (s) => {
        s.state = { active: 'activating', sub: 'start', pid: 101, restarts: 1 };
        s.log(1, `${UNIT}: Scheduled restart job, restart counter is at 1.`, 'systemd');
      },
    ];
    sd.clockSkewMs = 60_000;
    const events: SpectuneEvent[] = [];
    const { c, actionLog } = controllerFor(sd, prober(false), events);
    await c.apply(await c.plan({ speculative_num_steps: 10 }));
    const r = await c.waitReady();
    expect(r.status).toBe('failed');
    if (r.status !== 'failed') return;
    expect(r.looping).toBe(true);
    expect(r.verdict.class).toBe('crash_loop');
    expect(r.verdict.cause).toBe('kv_cache_oom');
    expect(r.timeToVerdictMs).not.toBeNull();
    expect(r.timeToVerdictMs!).toBeLessThan(5000);
    expect(r.journal).toContain(FATAL);
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
    expect(actionLog.records.map((a) => a.action)).toEqual(['deploy', 'restart', 'stop']);
    expect(events.some((e) => e.type === 'service:failed')).toBe(true);
  });

  it('rolls back to the known-good version (none: the operator unit alone) and verifies readiness', async () => {
    const sd = new ScriptedSystemd();
    sd.host.files.set(DROPIN, `[Service]\nExecStart=\nExecStart=${EXEC.replace('steps 3', 'steps 10')}\n`);
    sd.host.files.set(`/var/lib/spectune/${UNIT}/good`, 'none\n');
    sd.host.files.set(`/var/lib/spectune/${UNIT}/current`, '2\n');
    sd.script = [
      () => {},
      () => {},
      () => {},
      (s) => {
        s.log(100, 'The server is fired up and ready to roll!');
        s.state = { active: 'active', sub: 'running', pid: 100, restarts: 0 };
      },
    ];
    const { c } = controllerFor(sd, prober(true));
    const r = await c.rollback();
    expect(r).toMatchObject({ status: 'rolled_back', version: 'none' });
    expect(sd.host.files.has(DROPIN)).toBe(false);
    expect(sd.host.files.get(`/var/lib/spectune/${UNIT}/current`)).toBe('none\n');
    expect(sd.host.execs().map((a) => a.slice(0, 2).join(' '))).toContain('systemctl daemon-reload');
  });

  it('says E_ROLLBACK_FAILED when the known-good config fails too', async () => {
    const sd = new ScriptedSystemd();
    sd.host.files.set(`/var/lib/spectune/${UNIT}/good`, 'none\n');
    sd.script = [
      () => {},
      () => {},
      () => {},
      (s) => {
        s.log(100, FATAL);
        s.state = { active: 'failed', sub: 'failed', pid: 0, restarts: 0, result: 'exit-code' };
      },
    ];
    const { c } = controllerFor(sd, prober(false));
    await expect(c.rollback()).rejects.toMatchObject({ code: 'E_ROLLBACK_FAILED' });
  });

  it('waits for its own benchmark and the in-flight requests before restarting, and warns about the drain', async () => {
    const sd = new ScriptedSystemd();
    const busy = (n: number): EngineMetrics => ({
      acceptLength: null,
      runningRequests: n,
      queuedRequests: 0,
      kvUsage: null,
      genThroughput: 100,
      maxRunningRequests: null,
    });
    const order: string[] = [];
    const events: SpectuneEvent[] = [];
    const p = prober(true, [busy(16), busy(0)]);
    const { c } = controllerFor(
      sd,
      {
        ...p,
        metrics: async (...a) => {
          order.push('metrics');
          return p.metrics(...a);
        },
      },
      events,
    );
    sd.host.on(['systemctl', 'restart'], () => {
      order.push('restart');
      sd.state = { active: 'activating', sub: 'start', pid: 100, restarts: 0 };
      return {};
    });
    await c.restart('test', {
      quiesce: async () => {
        order.push('quiesce');
      },
    });
    expect(order).toEqual(['quiesce', 'metrics', 'metrics', 'restart']);
    const warn = events.find((e) => e.type === 'log' && e.level === 'warn');
    expect(warn && warn.type === 'log' ? warn.message : '').toMatch(/TimeoutStopSec=5s.*Fix: add TimeoutStopSec=/);
  });

  it('leaves nothing half-applied when the host refuses writes (no permission)', async () => {
    const sd = new ScriptedSystemd();
    sd.host.readOnly.push(/^\/var\/lib\/spectune\//, /^\/etc\/systemd\//);
    const { c } = controllerFor(sd, prober(true));
    await expect(c.apply(await c.plan({ speculative_num_steps: 4 }))).rejects.toMatchObject({
      code: 'E_NO_PERMISSION',
    });
    expect(sd.host.files.size).toBe(0);
    expect(
      sd.host.execs().filter((a) => a[0] === 'systemctl' && ['daemon-reload', 'restart', 'stop'].includes(a[1])),
    ).toEqual([]);
  });

  it('restores the previous drop-in when daemon-reload fails', async () => {
    const sd = new ScriptedSystemd();
    let reloads = 0;
    sd.host.on(['systemctl', 'daemon-reload'], () =>
      ++reloads === 1 ? { exitCode: 1, stderr: 'Failed to reload daemon: Access denied' } : {},
    );
    const { c } = controllerFor(sd, prober(true));
    await expect(c.apply(await c.plan({ speculative_num_steps: 4 }))).rejects.toMatchObject({
      code: 'E_NO_PERMISSION',
    });
    expect(sd.host.files.has(DROPIN)).toBe(false);
    expect(sd.host.execs().some((a) => a[1] === 'restart')).toBe(false);
  });

  it('refuses a hostile unit name before anything runs on the host', () => {
    const host = new FakeHost();
    for (const unit of ['x; reboot', '$(id).service', '--now', 'a b']) {
      expect(() =>
        createServiceController({ host, unit, engine: 'sglang', endpoint: 'http://x', collaborators }),
      ).toThrow(expect.objectContaining({ code: 'E_UNSAFE_VALUE' }));
    }
    expect(host.calls).toEqual([]);
  });

  it('reports a unit systemd does not know as E_UNIT_NOT_FOUND', async () => {
    const host = new FakeHost();
    host.on(['systemctl', 'show'], { stdout: 'Id=nope.service\nLoadState=not-found\nActiveState=inactive\n' });
    const c = createServiceController({
      host,
      unit: 'nope',
      engine: 'sglang',
      endpoint: 'http://x',
      collaborators,
      prober: prober(false),
    });
    await expect(c.restart('x')).rejects.toMatchObject({ code: 'E_UNIT_NOT_FOUND' });
  });
});

describe('checkLoop', () => {
  it('finds a crash loop in a unit systemd shows as active, diagnoses it and stops it', async () => {
    const sd = new ScriptedSystemd();
    sd.state = { active: 'active', sub: 'running', pid: 200, restarts: 2 };
    sd.script = [
      () => {},
      () => {},
      (s) => {
        s.log(200, 'RuntimeError: CUDA error: an illegal memory access was encountered');
        s.state = { active: 'active', sub: 'running', pid: 201, restarts: 3 };
      },
    ];
    const { c, actionLog } = controllerFor(sd, prober(true));
    const r = await c.checkLoop({ windowMs: 2000 });
    expect(r.status).toBe('failed');
    if (r.status !== 'failed') return;
    expect(r.looping).toBe(true);
    expect(r.verdict.class).toBe('crash_loop');
    expect(sd.state.active).toBe('inactive');
    expect(actionLog.records.map((a) => a.action)).toEqual(['stop']);
  });

  it('calls a quiet running unit stable after the window', async () => {
    const sd = new ScriptedSystemd();
    const { c, actionLog } = controllerFor(sd, prober(true));
    expect(await c.checkLoop({ windowMs: 50 })).toEqual({ status: 'stable' });
    expect(actionLog.records).toEqual([]);
  });
});

describe('apply when the restart cannot be issued', () => {
  it('puts the drop-in that was there before back (even one spectune had no history for)', async () => {
    const sd = new ScriptedSystemd();
    const old = `[Service]\nExecStart=\nExecStart=${EXEC.replace('steps 3', 'steps 7')}\n`;
    sd.host.files.set(DROPIN, old);
    sd.host.on(['systemctl', 'restart'], { exitCode: 1, stderr: 'Failed to restart: Access denied' });
    const { c } = controllerFor(sd, prober(true));
    await expect(c.apply(await c.plan({ speculative_num_steps: 8 }))).rejects.toMatchObject({
      code: 'E_NO_PERMISSION',
    });
    expect(sd.host.files.get(DROPIN)).toBe(old);
    expect(sd.host.files.get(`/var/lib/spectune/${UNIT}/good`)).toBe('1\n');
    expect(sd.host.files.get(`/var/lib/spectune/${UNIT}/dropins/1.conf`)).toBe(old);
    expect(sd.host.files.get(`/var/lib/spectune/${UNIT}/current`)).toBe('1\n');
  });
});

describe('polling on one abort signal', () => {
  it('sleep removes its abort listener when the timer fires, and an abort still ends it early', async () => {
    const ac = new AbortController();
    for (let i = 0; i < 50; i += 1) {
      await sleep(1, ac.signal);
      expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
    }
    const t0 = Date.now();
    const pending = sleep(60_000, ac.signal);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(1);
    ac.abort();
    await pending;
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });

  it('waitReady polls a slow start many times on one signal with a bounded listener count', async () => {
    const sd = new ScriptedSystemd();
    const ac = new AbortController();
    const counts: number[] = [];
    const slow = Array.from({ length: 60 }, () => () => {
      counts.push(getEventListeners(ac.signal, 'abort').length);
    });
    sd.script = [
      () => {},
      ...slow,
      (s) => {
        s.log(100, 'The server is fired up and ready to roll!');
        s.state = { active: 'active', sub: 'running', pid: 100, restarts: 0 };
      },
    ];
    const { c } = controllerFor(sd, prober(true));
    await c.restart('test');
    expect((await c.waitReady({ signal: ac.signal })).status).toBe('ready');
    expect(counts.length).toBeGreaterThan(50);
    expect(Math.max(...counts)).toBeLessThanOrEqual(1);
    expect(getEventListeners(ac.signal, 'abort')).toHaveLength(0);
  });
});
