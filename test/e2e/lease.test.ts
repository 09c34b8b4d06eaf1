// The commit-confirmed lease on a real systemd host: a candidate runs from /run (a reboot forgets it) and only a
// confirmed one reaches /etc; when spectune dies with a candidate in force (SIGKILL here: no handler can run) the
// host's own transient timer puts known-good back within the lease, byte for byte, with no daemon-reload pending,
// says so in its journal and removes the dead run's lock, so that the next apply needs no --break-lock.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installSimUnit, removeSimUnit, runCli, sh, waitHealthy, type SimUnit } from './service-helpers.js';
import { writeTuneConfig } from './tune-support.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LEASE = '15s';

// A file's bytes on the host, or null when it does not exist.
async function readOnHost(u: SimUnit, path: string): Promise<string | null> {
  const r = await u.host.exec(['cat', '--', path]);
  return r.exitCode === 0 ? r.stdout : null;
}

// Run the host's lease script as its timer does (its last step, stopping the timer, fails when no timer runs: ignored).
async function runLeaseScriptOn(u: SimUnit): Promise<void> {
  await u.host.exec(['sh', `/var/lib/spectune/${u.unit}/lease-expire.sh`]);
}

// Poll until check() is true (or fail after timeoutMs).
async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const t0 = Date.now();
  while (Date.now() - t0 < timeoutMs) {
    if (await check()) return Date.now() - t0;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

describe('commit-confirmed lease', () => {
  let u: SimUnit;
  let env: Record<string, string>;
  let etc: string;
  let trial: string;
  let state: string;
  const runLeaseScript = () => runLeaseScriptOn(u);
  beforeAll(async () => {
    u = await installSimUnit('lease', 32001);
    env = { SPECTUNE_ACTION_LOG: u.actionLog };
    etc = `/etc/systemd/system/${u.unit}.d/90-spectune.conf`;
    trial = `/run/systemd/system/${u.unit}.d/90-spectune.trial.conf`;
    state = `/var/lib/spectune/${u.unit}`;
    await waitHealthy(u.endpoint);
  });
  afterAll(async () => {
    if (u) {
      await removeSimUnit(u.host, u.unit);
      await u.host.close();
    }
  });

  it('apply --dry-run shows the lease in the plan and changes nothing', async () => {
    const r = await runCli(
      ['apply', ...u.flags, '--set', 'speculative_num_steps=4', '--lease', LEASE, '--dry-run'],
      env,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      'provisional for 15 s: the host restores known-good unless spectune confirms the candidate',
    );
    expect(r.stdout).toContain(`write ${trial}`);
    expect(r.stdout).toMatch(/systemd-run --unit=spectune-lease-spectune-svc-e2e-lease/);
    expect(await readOnHost(u, trial)).toBeNull();
    expect(await readOnHost(u, etc)).toBeNull();
  });

  it('a confirmed apply ends in /etc as known-good: no /run candidate, no lease timer, no pending daemon-reload', async () => {
    const r = await runCli(['apply', ...u.flags, '--set', 'speculative_num_steps=4', '--lease', LEASE], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/provisional: the host restores known-good unless spectune confirms it within 15 s/);
    expect(await readOnHost(u, trial)).toBeNull();
    expect(await readOnHost(u, etc)).toBe(await readOnHost(u, `${state}/dropins/1.conf`));
    expect((await readOnHost(u, `${state}/good`))?.trim()).toBe('1');
    expect((await readOnHost(u, `${state}/current`))?.trim()).toBe('1');
    expect(
      (await u.host.exec(['systemctl', 'is-active', 'spectune-lease-spectune-svc-e2e-lease.timer'])).stdout.trim(),
    ).not.toBe('active');
    expect((await sh(u.host, ['systemctl', 'show', '-p', 'NeedDaemonReload', '--value', u.unit])).trim()).toBe('no');
  });

  it('SIGKILL with a candidate in force: the host restores known-good within the lease, says so, frees the lock', async () => {
    const goodBytes = await readOnHost(u, etc);
    expect(goodBytes).toMatch(/--speculative-num-steps 4/);
    const since = `@${(await sh(u.host, ['date', '+%s'])).trim()}`;
    const child = spawn(
      process.execPath,
      [join(ROOT, 'bin/spectune.js'), 'apply', ...u.flags, '--set', 'speculative_num_steps=6', '--lease', LEASE],
      {
        cwd: ROOT,
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const exited = new Promise<number | null>((res) => child.on('close', (code) => res(code)));
    // The candidate is in force from /run: kill spectune there, before it can confirm or roll back.
    await waitFor('the candidate in /run', async () => (await readOnHost(u, trial)) !== null, 60_000);
    child.kill('SIGKILL');
    await exited;
    expect(await readOnHost(u, trial)).toMatch(/--speculative-num-steps 6/);
    expect(await readOnHost(u, etc)).toBe(goodBytes);
    expect(await readOnHost(u, `${state}/lock`)).not.toBeNull();
    // Nobody runs --resume: the host's own timer acts once the lease (15 s) is not renewed.
    const tookMs = await waitFor(
      'the lease to restore known-good',
      async () => (await readOnHost(u, trial)) === null,
      60_000,
    );
    await waitFor(
      'the journal line',
      async () =>
        /spectune lease of .* expired/.test(
          await sh(u.host, ['journalctl', '-t', 'spectune-lease', '--no-pager', `--since=${since}`]),
        ),
      20_000,
    );
    await waitFor(
      'the unit active on known-good',
      async () => (await u.host.exec(['systemctl', 'is-active', u.unit])).stdout.trim() === 'active',
      60_000,
    );
    await waitHealthy(u.endpoint);
    expect(tookMs).toBeLessThan(45_000);
    expect(await readOnHost(u, etc)).toBe(goodBytes);
    expect(await sh(u.host, ['systemctl', 'show', '-p', 'ExecStart', '--value', u.unit])).toMatch(
      /--speculative-num-steps 4 /,
    );
    expect((await sh(u.host, ['systemctl', 'show', '-p', 'NeedDaemonReload', '--value', u.unit])).trim()).toBe('no');
    expect((await readOnHost(u, `${state}/current`))?.trim()).toBe('1');
    await waitFor('the lock removed', async () => (await readOnHost(u, `${state}/lock`)) === null, 20_000);
    const journal = await sh(u.host, ['journalctl', '-t', 'spectune-lease', '--no-pager', `--since=${since}`]);
    expect(journal).toMatch(/candidate drop-in removed, restarting on known-good version 1/);
    expect(journal).toMatch(/removed the lock of the run that stopped renewing/);
    const status = await runCli(['status', ...u.flags], env);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).not.toMatch(/provisional/);
    // The next apply runs without --break-lock.
    const next = await runCli(['apply', ...u.flags, '--set', 'speculative_num_steps=5', '--lease', LEASE], env);
    expect(next.code, next.stderr).toBe(0);
    expect(await readOnHost(u, etc)).toMatch(/--speculative-num-steps 5/);
    expect(await readOnHost(u, trial)).toBeNull();
  });

  it('a kept unit mode: a 0600 unit file gets 0600 drop-ins and kept versions', async () => {
    await sh(u.host, ['chmod', '600', `/etc/systemd/system/${u.unit}`]);
    const r = await runCli(['apply', ...u.flags, '--set', 'speculative_num_steps=2', '--lease', LEASE], env);
    expect(r.code, r.stderr).toBe(0);
    const modes = (await sh(u.host, ['sh', '-c', `stat -c '%a %n' ${etc} ${state}/dropins/*.conf`])).trim().split('\n');
    expect(modes.length).toBeGreaterThan(1);
    for (const m of modes.filter((l) => l.endsWith(etc) || /dropins\/[4-9]\.conf$/.test(l))) expect(m).toMatch(/^600 /);
  });

  it("a confirmed config that is the unit's own leaves no drop-in, so the operator's later edit of the unit takes effect", async () => {
    const r = await runCli(['apply', ...u.flags, '--set', 'speculative_num_steps=3', '--lease', LEASE], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/the confirmed config is the unit's own: spectune's drop-in removed/);
    expect(await readOnHost(u, etc)).toBeNull();
    expect(await readOnHost(u, trial)).toBeNull();
    expect((await readOnHost(u, `${state}/good`))?.trim()).toBe('none');
    expect((await readOnHost(u, `${state}/current`))?.trim()).toBe('none');
    expect((await sh(u.host, ['systemctl', 'show', '-p', 'NeedDaemonReload', '--value', u.unit])).trim()).toBe('no');
    // The operator edits the unit: with no drop-in of spectune's left, their edit is what runs.
    await sh(u.host, [
      'sed',
      '-i',
      's/--speculative-num-steps 3/--speculative-num-steps 7/',
      `/etc/systemd/system/${u.unit}`,
    ]);
    await sh(u.host, ['systemctl', 'daemon-reload']);
    expect(await sh(u.host, ['systemctl', 'show', '-p', 'ExecStart', '--value', u.unit])).toMatch(
      /--speculative-num-steps 7 /,
    );
  });
  it("SIGKILL of tune with NO candidate in force (the baseline benchmark): the lease held around the lock still removes the dead run's lock, so the next apply needs no --break-lock", async () => {
    const goodBytes = await readOnHost(u, etc);
    const { config } = writeTuneConfig(u.th, u.unit, u.port);
    const child = spawn(
      process.execPath,
      [join(ROOT, 'bin/spectune.js'), 'tune', '-c', config, '--json', '--ssh-config', u.th.sshConfig, '--lease', LEASE],
      {
        cwd: ROOT,
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const exited = new Promise<void>((res) => child.on('close', () => res()));
    let err = '';
    const benching = new Promise<void>((res) =>
      child.stderr.on('data', (d: Buffer) => {
        err += d.toString();
        if (/"type":"trial:phase","ts":\d+,"trial":1,"phase":"bench"/.test(err)) res();
      }),
    );
    await Promise.race([benching, exited]);
    child.kill('SIGKILL');
    await exited;
    expect(err).toMatch(/"trial":1,"phase":"bench"/);
    // Killed while measuring the operator's own config: nothing to undo, but its lock is left behind.
    expect(await readOnHost(u, trial)).toBeNull();
    expect(await readOnHost(u, `${state}/lock`)).not.toBeNull();
    const tookMs = await waitFor(
      "the lease to remove the dead run's lock",
      async () => (await readOnHost(u, `${state}/lock`)) === null,
      45_000,
    );
    expect(tookMs).toBeLessThan(30_000);
    expect(await readOnHost(u, etc)).toBe(goodBytes);
    expect((await sh(u.host, ['systemctl', 'show', '-p', 'NeedDaemonReload', '--value', u.unit])).trim()).toBe('no');
    const next = await runCli(['apply', ...u.flags, '--set', 'speculative_num_steps=4', '--lease', LEASE], env);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).not.toMatch(/locked|--break-lock/);
    expect(
      (await u.host.exec(['systemctl', 'is-active', 'spectune-lease-spectune-svc-e2e-lease.timer'])).stdout.trim(),
    ).not.toBe('active');
  });

  it('a lease that lapses mid-confirm (the candidate already moved to /etc; the lease script run as its timer runs it) finishes the confirm: current = good = it', async () => {
    // The host as markVersionGood leaves it when spectune dies right after the move: /etc holds the measured
    // candidate, the provisional marker names it, good still the old version, no /run candidate, an expired lease.
    const next = String(
      Number((await sh(u.host, ['sh', '-c', `ls ${state}/dropins | sed 's/.conf$//' | sort -n | tail -1`])).trim()) + 1,
    );
    const cand = (await readOnHost(u, `${state}/dropins/1.conf`))!.replace(
      /--speculative-num-steps \d+/,
      '--speculative-num-steps 6',
    );
    await u.host.writeFile(`${state}/dropins/${next}.conf`, cand);
    await u.host.writeFile(etc, cand);
    await sh(u.host, ['systemctl', 'daemon-reload']);
    await u.host.writeFile(`${state}/provisional`, `${next}\n`);
    await u.host.writeFile(`${state}/current`, `${next}\n`);
    await sh(u.host, ['mkdir', '-p', `/run/spectune/${u.unit}`]);
    await u.host.writeFile(`/run/spectune/${u.unit}/lease`, '1\n"machine":"gone","pid":1}\n');
    await sh(u.host, ['touch', '-d', '@1', `/run/spectune/${u.unit}/lease`]);
    await runLeaseScript();
    expect((await readOnHost(u, `${state}/good`))?.trim()).toBe(next);
    expect((await readOnHost(u, `${state}/current`))?.trim()).toBe(next);
    expect(await readOnHost(u, `${state}/provisional`)).toBeNull();
    expect(await readOnHost(u, etc)).toBe(cand);
  });

  it('a lease that lapses with the candidate both in /run and already in /etc (a confirm cut before its reload) puts /etc back to known-good too', async () => {
    const good = (await readOnHost(u, `${state}/good`))!.trim();
    const goodBytes = (await readOnHost(u, `${state}/dropins/${good}.conf`))!;
    const next = String(
      Number((await sh(u.host, ['sh', '-c', `ls ${state}/dropins | sed 's/.conf$//' | sort -n | tail -1`])).trim()) + 1,
    );
    const cand = goodBytes.replace(/--speculative-num-steps \d+/, '--speculative-num-steps 2');
    await u.host.writeFile(`${state}/dropins/${next}.conf`, cand);
    await u.host.writeFile(trial, cand);
    await u.host.writeFile(etc, cand);
    await u.host.writeFile(`${state}/provisional`, `${next}\n`);
    await u.host.writeFile(`${state}/current`, `${next}\n`);
    await sh(u.host, ['mkdir', '-p', `/run/spectune/${u.unit}`]);
    await u.host.writeFile(`/run/spectune/${u.unit}/lease`, '1\n"machine":"gone","pid":1}\n');
    await sh(u.host, ['touch', '-d', '@1', `/run/spectune/${u.unit}/lease`]);
    await runLeaseScript();
    expect(await readOnHost(u, trial)).toBeNull();
    expect(await readOnHost(u, etc)).toBe(goodBytes);
    expect((await readOnHost(u, `${state}/current`))?.trim()).toBe(good);
    expect((await readOnHost(u, `${state}/good`))?.trim()).toBe(good);
    expect((await sh(u.host, ['systemctl', 'show', '-p', 'NeedDaemonReload', '--value', u.unit])).trim()).toBe('no');
    await waitFor(
      'the unit active on known-good',
      async () => (await u.host.exec(['systemctl', 'is-active', u.unit])).stdout.trim() === 'active',
      60_000,
    );
    expect(await sh(u.host, ['systemctl', 'show', '-p', 'ExecStart', '--value', u.unit])).not.toMatch(
      /--speculative-num-steps 2 /,
    );
  });
});
