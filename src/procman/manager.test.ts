import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseUnitState, SHOW_PROPERTIES } from '../service/show.js';
import { createProcessManager, type ProcessManager } from './manager.js';
import type { ServiceDef } from './types.js';

const NODE = process.execPath;
const open: { pm: ProcessManager; dir: string }[] = [];
afterEach(async () => {
  for (const { pm, dir } of open.splice(0)) {
    await pm.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

function manager(): ProcessManager {
  const dir = mkdtempSync(join(tmpdir(), 'procman-test-'));
  const pm = createProcessManager(dir);
  open.push({ pm, dir });
  return pm;
}

function nodeService(script: string, extra: Partial<ServiceDef> = {}): ServiceDef {
  return { argv: [NODE, '-e', script], ...extra };
}

async function waitFor(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const t0 = Date.now();
  while (!check()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

// The manager's own messages for a unit, in order.
function managerLines(pm: ProcessManager, name: string): string[] {
  return pm
    .journal(name)
    .entries.filter((e) => e.SYSLOG_IDENTIFIER === 'systemd')
    .map((e) => e.MESSAGE);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('process manager: start and stop', () => {
  it('runs a service, journals its output under its PID, and stops it cleanly with SIGTERM', async () => {
    const pm = manager();
    pm.define(
      'echo',
      nodeService('console.log("hello"); console.error("on stderr"); setInterval(() => {}, 1000)', {
        description: 'Echo test',
      }),
    );
    await pm.start('echo');
    const pid = Number(pm.show('echo').MainPID);
    expect(pm.show('echo')).toMatchObject({ ActiveState: 'active', SubState: 'running', Result: 'success' });
    expect(pid).toBeGreaterThan(0);
    await waitFor('output', () => pm.journal('echo').entries.some((e) => e.MESSAGE === 'on stderr'));
    const out = pm.journal('echo').entries.find((e) => e.MESSAGE === 'hello');
    expect(out).toMatchObject({
      _PID: String(pid),
      _SYSTEMD_UNIT: 'echo.service',
      SYSLOG_IDENTIFIER: 'node',
      _TRANSPORT: 'stdout',
    });
    await pm.stop('echo');
    expect(isAlive(pid)).toBe(false);
    expect(managerLines(pm, 'echo')).toEqual([
      'Started echo.service - Echo test.',
      'Stopping echo.service - Echo test...',
      'echo.service: Deactivated successfully.',
      'Stopped echo.service - Echo test.',
    ]);
    expect(pm.show('echo')).toMatchObject({
      ActiveState: 'inactive',
      SubState: 'dead',
      MainPID: '0',
      Result: 'success',
      ExecMainCode: '2',
      ExecMainStatus: '15',
    });
  });

  it('kills the whole process group with SIGKILL after TimeoutStopSec when SIGTERM is ignored', async () => {
    const pm = manager();
    const script =
      'process.on("SIGTERM", () => console.log("ignoring SIGTERM")); console.log("ready"); require("child_process").spawn(process.execPath, ["-e", "process.on(\'SIGTERM\', () => {}); console.log(\'grandchild ready\'); setInterval(() => {}, 1000)"], { stdio: "inherit" }); setInterval(() => {}, 1000)';
    pm.define('stubborn', nodeService(script, { timeoutStopSec: 0.5 }));
    await pm.start('stubborn');
    const pid = Number(pm.show('stubborn').MainPID);
    const ready = (m: string) => pm.journal('stubborn').entries.some((e) => e.MESSAGE === m);
    await waitFor('SIGTERM handlers installed', () => ready('ready') && ready('grandchild ready'));
    const t0 = Date.now();
    await pm.stop('stubborn');
    expect(Date.now() - t0).toBeGreaterThanOrEqual(450);
    const lines = managerLines(pm, 'stubborn');
    expect(lines.slice(0, 3)).toEqual([
      'Started stubborn.service.',
      'Stopping stubborn.service...',
      "stubborn.service: State 'stop-sigterm' timed out. Killing.",
    ]);
    const killed = lines.filter((l) => l.includes('with signal SIGKILL.'));
    expect(killed[0]).toBe(`stubborn.service: Killing process ${pid} (node) with signal SIGKILL.`);
    expect(killed).toHaveLength(2);
    expect(lines.slice(-3)).toEqual([
      'stubborn.service: Main process exited, code=killed, status=9/KILL',
      "stubborn.service: Failed with result 'timeout'.",
      'Stopped stubborn.service.',
    ]);
    const child = Number(/Killing process (\d+)/.exec(killed[1])?.[1]);
    await waitFor('grandchild gone', () => !isAlive(child), 2000);
    expect(pm.show('stubborn')).toMatchObject({
      ActiveState: 'failed',
      SubState: 'failed',
      Result: 'timeout',
      ExecMainCode: '2',
      ExecMainStatus: '9',
    });
    expect(pm.journal('stubborn').entries.some((e) => e.MESSAGE === 'ignoring SIGTERM')).toBe(true);
  });
});

describe('process manager: exits and restart policy', () => {
  it('Restart=no: a clean exit is inactive, a failing one is failed with the exit status', async () => {
    const pm = manager();
    pm.define('ok', nodeService('process.exit(0)'));
    pm.define('bad', nodeService('console.error("boom"); process.exit(3)'));
    await Promise.all([pm.start('ok'), pm.start('bad')]);
    await waitFor('both ended', () => pm.show('ok').SubState === 'dead' && pm.show('bad').SubState === 'failed');
    expect(managerLines(pm, 'ok')).toEqual(['Started ok.service.', 'ok.service: Deactivated successfully.']);
    expect(managerLines(pm, 'bad')).toEqual([
      'Started bad.service.',
      'bad.service: Main process exited, code=exited, status=3/NOTIMPLEMENTED',
      "bad.service: Failed with result 'exit-code'.",
    ]);
    const msgs = pm.journal('bad').entries.map((e) => e.MESSAGE);
    expect(msgs.indexOf('boom')).toBeLessThan(
      msgs.indexOf('bad.service: Main process exited, code=exited, status=3/NOTIMPLEMENTED'),
    );
    expect(pm.show('bad')).toMatchObject({
      Result: 'exit-code',
      ExecMainCode: '1',
      ExecMainStatus: '3',
      NRestarts: '0',
    });
  });

  it('Restart=on-failure crash loop: restarts counted, then the start limit stops it (result stays exit-code)', async () => {
    const pm = manager();
    pm.define(
      'crashy',
      nodeService('console.log("about to fail"); process.exit(1)', {
        restart: 'on-failure',
        restartSec: 0.05,
        startLimitBurst: 3,
        startLimitIntervalSec: 30,
      }),
    );
    await pm.start('crashy');
    await waitFor('start limit', () => managerLines(pm, 'crashy').includes('Failed to start crashy.service.'));
    const lines = managerLines(pm, 'crashy');
    expect(lines.filter((l) => l.startsWith('crashy.service: Scheduled restart job'))).toEqual(
      [1, 2, 3].map((n) => `crashy.service: Scheduled restart job, restart counter is at ${n}.`),
    );
    expect(lines.slice(-5)).toEqual([
      'crashy.service: Scheduled restart job, restart counter is at 3.',
      'Stopped crashy.service.',
      'crashy.service: Start request repeated too quickly.',
      "crashy.service: Failed with result 'exit-code'.",
      'Failed to start crashy.service.',
    ]);
    expect(pm.show('crashy')).toMatchObject({
      ActiveState: 'failed',
      SubState: 'failed',
      Result: 'exit-code',
      NRestarts: '3',
    });
    await expect(pm.start('crashy')).rejects.toMatchObject({ code: 'E_SERVICE_FAILED' });
    pm.resetFailed('crashy');
    await pm.start('crashy');
    expect(pm.show('crashy').NRestarts).toBe('0');
  });

  it('Restart=always with clean exits ends in start-limit-hit; a missing binary is 203/EXEC', async () => {
    const pm = manager();
    pm.define('loop', nodeService('process.exit(0)', { restart: 'always', restartSec: 0.02, startLimitBurst: 2 }));
    pm.define('nobin', { argv: ['/nonexistent/spectune-engine', '--port', '1'] });
    await Promise.all([pm.start('loop'), pm.start('nobin')]);
    await waitFor('both failed', () => pm.show('loop').SubState === 'failed' && pm.show('nobin').SubState === 'failed');
    expect(pm.show('loop')).toMatchObject({ Result: 'start-limit-hit', NRestarts: '2' });
    expect(managerLines(pm, 'nobin')).toEqual([
      'Started nobin.service.',
      'nobin.service: Failed at step EXEC spawning /nonexistent/spectune-engine: ENOENT',
      'nobin.service: Main process exited, code=exited, status=203/EXEC',
      "nobin.service: Failed with result 'exit-code'.",
    ]);
  });

  it('stop during auto-restart cancels the restart; restart() gives a new PID and resets NRestarts', async () => {
    const pm = manager();
    pm.define('flappy', nodeService('process.exit(1)', { restart: 'on-failure', restartSec: 5 }));
    await pm.start('flappy');
    await waitFor('auto-restart', () => pm.show('flappy').SubState === 'auto-restart');
    expect(pm.show('flappy').ActiveState).toBe('activating');
    await pm.stop('flappy');
    expect(pm.show('flappy')).toMatchObject({ ActiveState: 'failed', Result: 'exit-code' });
    pm.define('svc', nodeService('setInterval(() => {}, 1000)'));
    await pm.start('svc');
    const before = pm.show('svc').MainPID;
    const cursor = pm.journal('svc').cursor;
    await pm.restart('svc');
    expect(pm.show('svc')).toMatchObject({ ActiveState: 'active', NRestarts: '0' });
    expect(pm.show('svc').MainPID).not.toBe(before);
    expect(pm.journal('svc', { afterCursor: cursor }).entries.map((e) => e.MESSAGE)).toEqual([
      'Stopping svc.service...',
      'svc.service: Deactivated successfully.',
      'Stopped svc.service.',
      'Started svc.service.',
    ]);
  });
});

describe('process manager: environment', () => {
  it('gives a service a clean environment plus env (systemd-like), or everything with inheritEnvironment', async () => {
    process.env.SPECTUNE_PROCMAN_LEAK = 'leaked';
    try {
      const pm = manager();
      const script =
        'console.log(JSON.stringify([process.env.SPECTUNE_PROCMAN_LEAK ?? null, process.env.SPECTUNE_PROCMAN_MODE ?? null, Boolean(process.env.PATH)]))';
      pm.define('clean', nodeService(script, { env: { SPECTUNE_PROCMAN_MODE: 'x' } }));
      pm.define('inherit', nodeService(script, { inheritEnvironment: true }));
      await Promise.all([pm.start('clean'), pm.start('inherit')]);
      await waitFor(
        'both printed',
        () =>
          pm.journal('clean').entries.some((e) => e.MESSAGE.startsWith('[')) &&
          pm.journal('inherit').entries.some((e) => e.MESSAGE.startsWith('[')),
      );
      expect(pm.journal('clean').entries.find((e) => e.MESSAGE.startsWith('['))?.MESSAGE).toBe('[null,"x",true]');
      expect(pm.journal('inherit').entries.find((e) => e.MESSAGE.startsWith('['))?.MESSAGE).toBe(
        '["leaked",null,true]',
      );
    } finally {
      delete process.env.SPECTUNE_PROCMAN_LEAK;
    }
  });
});

describe('process manager: definitions and show', () => {
  it('persists definitions, reports unknown units like systemctl, and renders show text that parseUnitState reads', async () => {
    const pm = manager();
    pm.define('keep', nodeService('setInterval(() => {}, 1000)', { timeoutStopSec: 3, restart: 'on-failure' }));
    const again = createProcessManager(pm.dir);
    expect(again.list()).toEqual(['keep.service']);
    await again.close();
    expect(pm.show('nope')).toMatchObject({ LoadState: 'not-found', ActiveState: 'inactive' });
    await expect(pm.start('nope')).rejects.toMatchObject({ code: 'E_UNIT_NOT_FOUND' });
    expect(() => pm.define('../x', { argv: ['true'] })).toThrow(expect.objectContaining({ code: 'E_UNSAFE_VALUE' }));
    expect(() => pm.define('y', { argv: [] })).toThrow(expect.objectContaining({ code: 'E_CONFIG_INVALID' }));
    await pm.start('keep');
    const state = parseUnitState(pm.showText('keep', SHOW_PROPERTIES));
    expect(state).toMatchObject({
      id: 'keep.service',
      activeState: 'active',
      subState: 'running',
      restart: 'on-failure',
      timeoutStopMs: 3000,
      nRestarts: 0,
    });
    expect(state.mainPid).toBe(Number(pm.show('keep').MainPID));
  });
});
