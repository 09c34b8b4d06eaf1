// What is in force, on a real systemd host: status/doctor show spectune's drop-in with its ExecStart diff against the
// operator's unit, warn about a later 95-operator.conf overriding it (rollback refuses, changing nothing); history
// lists the kept versions and its `rollback --to N` line works; fold --dry-run changes no byte, fold leaves no
// drop-in, the same effective ExecStart and the same MainPID (no restart).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHost } from '../../src/host/open.js';
import type { Host } from '../../src/host/types.js';
import { getTestHost } from './helpers/testhosts.js';
import { removeSimUnit, renderSimUnit, runCli, sh, waitHealthy } from './service-helpers.js';

const UNIT = 'st-uv-view.service';
const PORT = 32200;
const UNIT_PATH = `/etc/systemd/system/${UNIT}`;
const DROPIN = `/etc/systemd/system/${UNIT}.d/90-spectune.conf`;
const OPERATOR = `/etc/systemd/system/${UNIT}.d/95-operator.conf`;

describe('unit view: what is in force, history, fold', () => {
  const th = getTestHost('th2');
  let host: Host;
  let flags: string[];
  let env: Record<string, string>;
  const show = async (p: string) => (await sh(host, ['systemctl', 'show', '-p', p, '--value', '--', UNIT])).trim();
  const bytes = async (path: string) => (await host.exec(['cat', '--', path])).stdout;

  beforeAll(async () => {
    host = await openHost({ target: th.name, sshConfig: th.sshConfig });
    await removeSimUnit(host, UNIT);
    await host.writeFile(UNIT_PATH, renderSimUnit(UNIT, PORT, 30));
    await sh(host, ['systemctl', 'daemon-reload']);
    await sh(host, ['systemctl', 'start', UNIT]);
    const endpoint = `http://${th.ip}:${PORT}`;
    flags = ['--host', th.name, '--ssh-config', th.sshConfig, '--unit', UNIT, '--endpoint', endpoint];
    env = { SPECTUNE_ACTION_LOG: join(mkdtempSync(join(tmpdir(), 'st-uv-')), 'actions.jsonl') };
    await waitHealthy(endpoint);
  }, 120_000);
  afterAll(async () => {
    if (host) {
      await removeSimUnit(host, UNIT);
      await host.close();
    }
  });

  it('two applies: status and doctor show the drop-in in force with its diff; history lists both and its rollback line works', async () => {
    for (const n of [4, 5]) {
      const r = await runCli(['apply', ...flags, '--set', `speculative_num_steps=${n}`], env);
      expect(r.code, r.stderr).toBe(0);
    }
    const st = await runCli(['status', ...flags], env);
    expect(st.code, st.stderr).toBe(0);
    expect(st.stdout).toContain(`1. ${UNIT_PATH}  [unit file]`);
    expect(st.stdout).toContain(`2. ${DROPIN}  [spectune's drop-in]`);
    expect(st.stdout).toContain(`the unit file's own ExecStart is overridden by ${DROPIN}`);
    expect(st.stdout).toMatch(/^ {4}---speculative-num-steps 3$/m);
    expect(st.stdout).toMatch(/^ {4}\+--speculative-num-steps 5$/m);
    expect(st.stdout).toContain('lock: free');
    const js = JSON.parse((await runCli(['status', ...flags, '--json'], env)).stdout);
    expect(js.view.spectunePath).toBe(DROPIN);
    expect(js.view.overrides).toEqual([]);
    expect(js.lock).toBeNull();
    const doc = JSON.parse((await runCli(['doctor', ...flags, '--json'], env)).stdout) as {
      checks: { id: string; status: string; summary: string }[];
    };
    const inForce = doc.checks.find((c) => c.id === 'in-force')!;
    expect(inForce.status).toBe('WARN');
    expect(inForce.summary).toContain(`spectune's drop-in ${DROPIN} is in force`);
    expect(inForce.summary).toContain('---speculative-num-steps 3, +--speculative-num-steps 5');

    const h = await runCli(['history', ...flags], env);
    expect(h.code, h.stderr).toBe(0);
    expect(h.stdout).toMatch(
      /^ +1 {2}\d{4}-\d\d-\d\dT[\d:]+Z\n {7}---speculative-num-steps 3, \+--speculative-num-steps 4$/m,
    );
    expect(h.stdout).toMatch(/^ +2 {2}\S+ {2}\[current, known-good, in force\]$/m);
    const line = h.stdout
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l.endsWith('--to 1'))!;
    expect(line).toBe(`spectune rollback --host ${th.name} --unit ${UNIT} --to 1`);
    const rb = await runCli(
      [...line.split(' ').slice(1), '--ssh-config', th.sshConfig, '--endpoint', `http://${th.ip}:${PORT}`],
      env,
    );
    expect(rb.code, rb.stderr).toBe(0);
    expect(rb.stdout).toMatch(/^rolled back .* to version 1: ready; in force: .*speculative_num_steps=4/);
  }, 300_000);

  it('a later 95-operator.conf overriding ExecStart: status and doctor warn with the value in force, rollback refuses and changes nothing', async () => {
    const exec = (await bytes(UNIT_PATH))
      .split('\n')
      .find((l) => l.startsWith('ExecStart='))!
      .replace('--speculative-num-steps 3', '--speculative-num-steps 10');
    await host.writeFile(OPERATOR, `[Service]\nExecStart=\n${exec}\n`);
    await sh(host, ['systemctl', 'daemon-reload']);
    try {
      const st = await runCli(['status', ...flags], env);
      expect(st.stdout).toContain(`OVERRIDDEN by ${OPERATOR}`);
      expect(st.stdout).toContain(`3. ${OPERATOR}  [drop-in (not spectune's)]`);
      expect(st.stdout).toMatch(
        new RegExp(
          `warning: ${OPERATOR.replace(/\./g, '\\.')} \\(after spectune's drop-in\\) overrides ExecStart; in force: ExecStart=.*--speculative-num-steps 10`,
        ),
      );
      const doc = JSON.parse((await runCli(['doctor', ...flags, '--json'], env)).stdout) as {
        checks: { id: string; status: string; summary: string; fix: string }[];
      };
      const c = doc.checks.find((x) => x.id === 'in-force')!;
      expect(c.status).toBe('WARN');
      expect(c.summary).toContain(`${OPERATOR} comes after spectune's drop-in and overrides ExecStart`);
      const before = {
        pid: await show('MainPID'),
        dropIn: await bytes(DROPIN),
        current: await bytes(`/var/lib/spectune/${UNIT}/current`),
      };
      const rb = await runCli(['rollback', ...flags, '--to', '2'], env);
      expect(rb.code).toBe(1);
      expect(rb.stderr).toContain(`${OPERATOR} comes after spectune's drop-in and overrides ExecStart`);
      expect(rb.stderr).toContain(`move ${OPERATOR} out of the way`);
      expect({
        pid: await show('MainPID'),
        dropIn: await bytes(DROPIN),
        current: await bytes(`/var/lib/spectune/${UNIT}/current`),
      }).toEqual(before);
    } finally {
      await sh(host, ['rm', '-f', '--', OPERATOR]);
      await sh(host, ['systemctl', 'daemon-reload']);
    }
  }, 300_000);

  it('fold --dry-run changes no byte; fold leaves no drop-in, the same effective ExecStart, no restart', async () => {
    const before = {
      unit: await bytes(UNIT_PATH),
      dropIn: await bytes(DROPIN),
      exec: await show('ExecStart'),
      pid: await show('MainPID'),
    };
    expect(before.dropIn).toContain('--speculative-num-steps 4');
    const dry = await runCli(['fold', ...flags, '--dry-run'], env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/^\+ExecStart=.*--speculative-num-steps 4/m);
    expect(dry.stdout).toContain('(dry run: nothing was changed)');
    expect({
      unit: await bytes(UNIT_PATH),
      dropIn: await bytes(DROPIN),
      exec: await show('ExecStart'),
      pid: await show('MainPID'),
    }).toEqual(before);
    const f = await runCli(['fold', ...flags], env);
    expect(f.code, f.stderr).toBe(0);
    expect(f.stdout).toContain(`folded ${DROPIN} into ${UNIT_PATH}`);
    expect((await host.exec(['test', '-e', DROPIN])).exitCode).not.toBe(0);
    expect(await show('ExecStart')).toBe(before.exec);
    expect(await show('MainPID')).toBe(before.pid);
    expect(await bytes(UNIT_PATH)).toContain('--speculative-num-steps 4');
    const backups = (await sh(host, ['ls', `/var/lib/spectune/${UNIT}`]))
      .split('\n')
      .filter((l) => l.startsWith('unit-backup-'));
    expect(backups.length).toBe(1);
    expect(await bytes(`/var/lib/spectune/${UNIT}/${backups[0]}`)).toBe(before.unit);
    const st = await runCli(['status', ...flags], env);
    expect(st.stdout).toContain("drop-in: none (the operator's unit as written)");
  }, 300_000);
});
