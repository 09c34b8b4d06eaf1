// The ordinary life of a tuned unit on a real test host: dry run (nothing changes), apply and mark good, a second
// apply, rollback to the last known-good drop-in (not to the operator's unit), logs of a past trial, the
// TimeoutStopSec fix, and the operator's unit file never edited.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  installSimUnit,
  removeSimUnit,
  renderSimUnit,
  runCli,
  sh,
  waitHealthy,
  type SimUnit,
} from './service-helpers.js';

describe('service lifecycle: dry run, apply, apply, rollback, logs', () => {
  let u: SimUnit;
  let env: Record<string, string>;
  beforeAll(async () => {
    u = await installSimUnit('life', 31406);
    env = { SPECTUNE_ACTION_LOG: u.actionLog };
    await waitHealthy(u.endpoint);
  });
  afterAll(async () => {
    if (u) {
      await removeSimUnit(u.host, u.unit);
      await u.host.close();
    }
  });

  it('--dry-run prints the drop-in and the ExecStart as a diff plus the commands, and changes nothing', async () => {
    const pid = (await sh(u.host, ['systemctl', 'show', '-p', 'MainPID', '--value', u.unit])).trim();
    const r = await runCli(['apply', ...u.flags, '--set', 'speculative_num_steps=4', '--dry-run'], env);
    expect(r.code, r.stderr).toBe(0);
    // Commit-confirmed lease (issue 19): the candidate is planned into /run (a reboot forgets it) under the
    // host-side timer, and only confirmed into /etc once it is ready.
    expect(r.stdout).toContain('provisional for 300 s');
    expect(r.stdout).toContain(`+++ b/run/systemd/system/${u.unit}.d/90-spectune.trial.conf`);
    expect(r.stdout).toMatch(/systemd-run --unit=spectune-lease-/);
    expect(r.stdout).toContain(`write /etc/systemd/system/${u.unit}.d/90-spectune.conf  # once it is ready`);
    expect(r.stdout).toContain('+ExecStart=\n');
    expect(r.stdout).toContain('---speculative-num-steps 3\n+--speculative-num-steps 4');
    expect(r.stdout).toContain('systemctl daemon-reload');
    expect(r.stdout).toContain(`systemctl restart ${u.unit}`);
    expect((await u.host.exec(['test', '-e', `/etc/systemd/system/${u.unit}.d`])).exitCode).toBe(1);
    expect((await u.host.exec(['test', '-e', `/run/systemd/system/${u.unit}.d`])).exitCode).toBe(1);
    expect((await u.host.exec(['test', '-e', `/var/lib/spectune/${u.unit}`])).exitCode).toBe(1);
    expect((await sh(u.host, ['systemctl', 'show', '-p', 'MainPID', '--value', u.unit])).trim()).toBe(pid);
  });

  it('applies two configs, rolls back to the last known-good one, shows the logs of a past trial', async () => {
    const a = await runCli(['apply', ...u.flags, '--set', 'speculative_num_steps=4', '--json'], env);
    expect(JSON.parse(a.stdout)).toMatchObject({
      status: 'ready',
      config: { speculative_num_steps: 4 },
      verdict: null,
      timeToVerdictMs: null,
    });
    const b = await runCli(
      ['apply', ...u.flags, '--set', 'speculative_eagle_topk=2', '--set', 'speculative_num_draft_tokens=8', '--json'],
      env,
    );
    expect(JSON.parse(b.stdout)).toMatchObject({
      status: 'ready',
      config: { speculative_num_steps: 4, speculative_eagle_topk: 2 },
    });
    // The second apply became the known-good one; make the first the known-good again to roll back to it.
    await sh(u.host, ['sh', '-c', `echo 1 > /var/lib/spectune/${u.unit}/good`]);
    const rb = await runCli(['rollback', ...u.flags, '--json'], env);
    expect(rb.code, rb.stderr).toBe(0);
    expect(JSON.parse(rb.stdout)).toMatchObject({
      status: 'rolled_back',
      config: { speculative_num_steps: 4, speculative_eagle_topk: 1 },
      verdict: null,
    });
    expect(await sh(u.host, ['cat', `/etc/systemd/system/${u.unit}.d/90-spectune.conf`])).toBe(
      await sh(u.host, ['cat', `/var/lib/spectune/${u.unit}/dropins/1.conf`]),
    );

    const logs1 = await runCli(['logs', ...u.flags, '--version', '1'], env);
    expect(logs1.code, logs1.stderr).toBe(0);
    expect(logs1.stdout).toMatch(/speculative_num_steps=4, speculative_eagle_topk=1/);
    expect(logs1.stdout).not.toMatch(/speculative_eagle_topk=2/);
    const logs2 = await runCli(['logs', ...u.flags, '--version', '2'], env);
    expect(logs2.stdout).toMatch(/speculative_eagle_topk=2/);
    const none = await runCli(['logs', ...u.flags, '--version', '9'], env);
    expect(none.code).toBe(1);
    expect(none.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('applies the offered TimeoutStopSec fix through the drop-in, and never edits the unit file', async () => {
    const r = await runCli(
      ['apply', ...u.flags, '--set', 'speculative_num_steps=5', '--timeout-stop-sec', '120', '--json'],
      env,
    );
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'ready' });
    expect((await sh(u.host, ['systemctl', 'show', '-p', 'TimeoutStopUSec', '--value', u.unit])).trim()).toBe('2min');
    expect(await sh(u.host, ['cat', `/etc/systemd/system/${u.unit}`])).toBe(renderSimUnit(u.unit, u.port, 30));
    const same = await runCli(['apply', ...u.flags, '--set', 'speculative_num_steps=5', '--dry-run'], env);
    expect(same.stdout).toMatch(/no change: the drop-in already says this/);
  });
});
