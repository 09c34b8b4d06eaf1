// Safe previews on a real systemd host: rollback on a unit spectune never deployed changes nothing (no restart:
// same MainPID), `rollback --dry-run` and `apply --dry-run` (with the engine-flag form of --set) change nothing
// anywhere, not even the local action log; after a real deploy, rollback --dry-run shows the way back.
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installSimUnit, removeSimUnit, runCli, sh, waitHealthy, type SimUnit } from './service-helpers.js';

// The unit's MainPID and restart count, read directly (not through spectune).
async function pidOf(u: SimUnit): Promise<string> {
  return (await sh(u.host, ['systemctl', 'show', '-p', 'MainPID', '-p', 'NRestarts', '--', u.unit])).trim();
}

// Whether a path exists on the test host.
async function existsOnHost(u: SimUnit, path: string): Promise<boolean> {
  return (await u.host.exec(['test', '-e', path])).exitCode === 0;
}

describe('rollback and apply previews change nothing', () => {
  let u: SimUnit;
  let env: Record<string, string>;
  beforeAll(async () => {
    u = await installSimUnit('noop', 31407);
    env = { SPECTUNE_ACTION_LOG: u.actionLog };
    await waitHealthy(u.endpoint);
  });
  afterAll(async () => {
    if (u) {
      await removeSimUnit(u.host, u.unit);
      await u.host.close();
    }
  });

  it('rollback on a unit spectune never deployed: says so, exit 0, no restart, nothing written', async () => {
    const before = await pidOf(u);
    expect(before).toMatch(/MainPID=[1-9]\d*/);
    for (const extra of [['--dry-run'], [], ['--json']]) {
      const r = await runCli(['rollback', ...u.flags, ...extra], env);
      expect(r.code, r.stderr).toBe(0);
      if (extra[0] === '--json')
        expect(JSON.parse(r.stdout)).toMatchObject({
          status: 'nothing',
          reason: expect.stringContaining('nothing to roll back'),
        });
      else
        expect(r.stdout).toBe(
          `nothing to roll back: no spectune drop-in on ${u.unit} (spectune never deployed to it); it was left as it is\n`,
        );
      expect(r.stderr).not.toMatch(/restart|not ready/);
    }
    expect(await pidOf(u)).toBe(before);
    expect(await existsOnHost(u, `/etc/systemd/system/${u.unit}.d`)).toBe(false);
    expect(await existsOnHost(u, `/var/lib/spectune/${u.unit}`)).toBe(false);
    expect(existsSync(u.actionLog)).toBe(false);
  });

  it('apply --dry-run takes --set --speculative-num-steps=4 and prints the plan without touching host or action log', async () => {
    const before = await pidOf(u);
    const r = await runCli(['apply', ...u.flags, '--set', '--speculative-num-steps=4', '--dry-run'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`plan for ${u.unit}`);
    expect(r.stdout).toMatch(/^\+--speculative-num-steps 4$/m);
    expect(await pidOf(u)).toBe(before);
    expect(await existsOnHost(u, `/etc/systemd/system/${u.unit}.d/90-spectune.conf`)).toBe(false);
    expect(await existsOnHost(u, `/var/lib/spectune/${u.unit}`)).toBe(false);
    expect(existsSync(u.actionLog)).toBe(false);
  });

  it('after a real deploy: rollback has nothing to do on the known-good version; --to none --dry-run shows the way back and changes nothing; --to none takes it', async () => {
    const applied = await runCli(['apply', ...u.flags, '--set', 'speculative_num_steps=4'], env);
    expect(applied.code, applied.stderr).toBe(0);
    const deployed = await pidOf(u);
    // A successful apply marks its version known-good: rolling back to it would restart for nothing.
    const same = await runCli(['rollback', ...u.flags], env);
    expect(same.code, same.stderr).toBe(0);
    expect(same.stdout).toBe(
      `nothing to roll back: ${u.unit} already runs known-good version 1 and is active; it was left as it is\n`,
    );
    const dry = await runCli(['rollback', ...u.flags, '--to', 'none', '--dry-run'], env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout, dry.stdout).toContain(
      `rollback plan for ${u.unit}: return to version none (the operator's unit, no spectune drop-in)`,
    );
    expect(dry.stdout).toMatch(/^-ExecStart=.*--speculative-num-steps 4/m);
    expect(dry.stdout).toContain('(dry run: nothing was changed)');
    expect(await pidOf(u)).toBe(deployed);
    expect(await existsOnHost(u, `/etc/systemd/system/${u.unit}.d/90-spectune.conf`)).toBe(true);
    const bad = await runCli(['rollback', ...u.flags, '--to', '7', '--dry-run'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe(
      `spectune: ${u.unit} has no kept version 7 (hint: kept versions: 1, or none (the operator's unit alone))\n`,
    );
    const rb = await runCli(['rollback', ...u.flags, '--to', 'none'], env);
    expect(rb.code, rb.stderr).toBe(0);
    expect(rb.stdout).toMatch(/^rolled back .* to version none: ready; in force: .*speculative_num_steps=3/);
    expect(await pidOf(u)).not.toBe(deployed);
    expect(await existsOnHost(u, `/etc/systemd/system/${u.unit}.d/90-spectune.conf`)).toBe(false);
    // Back on the operator's own config, now the known-good one: a plain rollback has nothing to do.
    const again = await runCli(['rollback', ...u.flags], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(
      /^nothing to roll back: .* already runs its own config \(no spectune drop-in\) and is active/,
    );
  });
});
