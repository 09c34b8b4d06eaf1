// Environment failures on real test hosts: unreachable host, wrong key, unit missing, no permission. Each is one
// line on stderr with a coded message, and nothing is half-applied on the host.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installSimUnit, removeSimUnit, runCli, sh, waitHealthy, type SimUnit } from './service-helpers.js';

/** A user on the test host with our key but no root and no sudo. */
const PLAIN_USER = 'svcnobody';

// Expect exactly one line on stderr, matching `re`.
function expectOneLine(stderr: string, re: RegExp): void {
  const lines = stderr.trim().split('\n');
  expect(lines, stderr).toHaveLength(1);
  expect(lines[0]).toMatch(re);
}

describe('environment failures are one line and leave nothing half-applied', () => {
  let u: SimUnit;
  let target: string[];
  beforeAll(async () => {
    u = await installSimUnit('errors', 31404);
    await sh(u.host, ['sh', '-c', `id ${PLAIN_USER} >/dev/null 2>&1 || useradd -m -s /bin/sh ${PLAIN_USER}`]);
    await sh(u.host, ['install', '-d', '-m', '700', '-o', PLAIN_USER, `/home/${PLAIN_USER}/.ssh`]);
    await sh(u.host, [
      'install',
      '-m',
      '600',
      '-o',
      PLAIN_USER,
      '/root/.ssh/authorized_keys',
      `/home/${PLAIN_USER}/.ssh/authorized_keys`,
    ]);
    target = ['--ssh-config', u.th.sshConfig, '--unit', u.unit, '--endpoint', u.endpoint];
    await waitHealthy(u.endpoint);
  });
  afterAll(async () => {
    if (u) {
      await removeSimUnit(u.host, u.unit);
      await u.host.close();
    }
  });

  it('host unreachable', async () => {
    const started = Date.now();
    const r = await runCli(['status', '--host', `root@${u.th.unusedIp}`, ...target]);
    expect(r.code).toBe(1);
    expectOneLine(r.stderr, /^spectune: .*(unreachable|cannot reach|timed out|no route)/i);
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('wrong key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'spectune-svc-e2e-key-'));
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'id')]);
    const config = readFileSync(u.th.sshConfig, 'utf8').replace(/IdentityFile \S+/g, `IdentityFile ${join(dir, 'id')}`);
    writeFileSync(join(dir, 'config'), config);
    const r = await runCli([
      'apply',
      '--host',
      u.th.name,
      '--ssh-config',
      join(dir, 'config'),
      '--unit',
      u.unit,
      '--endpoint',
      u.endpoint,
      '--set',
      'speculative_num_steps=5',
    ]);
    expect(r.code).toBe(1);
    expectOneLine(r.stderr, /^spectune: .*(auth|permission denied \(publickey|key)/i);
    expect((await u.host.exec(['test', '-e', `/etc/systemd/system/${u.unit}.d`])).exitCode).toBe(1);
  });

  it('unit missing', async () => {
    for (const cmd of [['status'], ['apply', '--set', 'speculative_num_steps=5'], ['rollback']]) {
      const r = await runCli([
        cmd[0],
        '--host',
        u.th.name,
        '--ssh-config',
        u.th.sshConfig,
        '--unit',
        'spectune-svc-e2e-missing',
        '--endpoint',
        u.endpoint,
        ...cmd.slice(1),
      ]);
      expect(r.code).toBe(1);
      expectOneLine(r.stderr, /^spectune: th2: unit spectune-svc-e2e-missing\.service not found/);
    }
    expect((await u.host.exec(['test', '-e', '/var/lib/spectune/spectune-svc-e2e-missing.service'])).exitCode).toBe(1);
  });

  it('no permission (a user without root or sudo): apply and rollback change nothing', async () => {
    const pidBefore = (await sh(u.host, ['systemctl', 'show', '-p', 'MainPID', '--value', u.unit])).trim();
    const as = ['--host', `${PLAIN_USER}@${u.th.name}`, ...target];
    const apply = await runCli(['apply', ...as, '--set', 'speculative_num_steps=5'], {
      SPECTUNE_ACTION_LOG: u.actionLog,
    });
    expect(apply.code).toBe(1);
    expectOneLine(apply.stderr, /^spectune: svcnobody@th2: .*permission denied/i);
    const viaSudo = await runCli(['apply', ...as, '--sudo', '--set', 'speculative_num_steps=5'], {
      SPECTUNE_ACTION_LOG: u.actionLog,
    });
    expect(viaSudo.code).toBe(1);
    expectOneLine(viaSudo.stderr, /^spectune: svcnobody@th2: .*sudo/i);
    // Nothing was ever deployed to this unit: rollback has nothing to do, says so and touches nothing (no restart).
    const rollback = await runCli(['rollback', ...as], { SPECTUNE_ACTION_LOG: u.actionLog });
    expect(rollback.code, rollback.stderr).toBe(0);
    expect(rollback.stdout).toMatch(/^nothing to roll back: no spectune drop-in on /);
    const logs = await runCli(['logs', ...as]);
    expect(logs.code).toBe(1);
    expectOneLine(logs.stderr, /^spectune: svcnobody@th2: not allowed to read the system journal/);

    // Nothing half-applied: no drop-in, no state, the same process still serving, no action recorded.
    expect((await u.host.exec(['test', '-e', `/etc/systemd/system/${u.unit}.d`])).exitCode).toBe(1);
    expect((await u.host.exec(['test', '-e', `/var/lib/spectune/${u.unit}`])).exitCode).toBe(1);
    expect((await sh(u.host, ['systemctl', 'show', '-p', 'MainPID', '--value', u.unit])).trim()).toBe(pidBefore);
    expect(existsSync(u.actionLog) ? readFileSync(u.actionLog, 'utf8') : '').toBe('');
  });
});
