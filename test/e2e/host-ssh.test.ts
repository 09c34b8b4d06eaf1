// SshHost against the real systemd + sshd test hosts (scripts/testhost/up-all.sh).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SshHost } from '../../src/host/ssh.js';
import { HOSTILE, makeAttacks } from './helpers/hostile.js';
import { getTestHost, type TestHost } from './helpers/testhosts.js';

let th1: TestHost;
let host: SshHost;
let scratch: string;
const run = `${process.pid}-${Date.now()}`;

// A temporary ssh config whose `Host name` block is `lines` (for wrong key / unknown host key / refused).
function tempConfig(name: string, lines: string[]): string {
  const path = join(scratch, `${name}.config`);
  writeFileSync(path, `Host ${name}\n${lines.map((l) => `  ${l}\n`).join('')}`);
  return path;
}

// None of these paths may exist, neither on the host nor on this machine.
async function expectNoneExist(paths: string[]): Promise<void> {
  const r = await host.exec(['sh', '-c', 'for f in "$@"; do test -e "$f" && echo "$f"; done; true', 'check', ...paths]);
  expect(r.stdout).toBe('');
  for (const p of paths) expect(existsSync(p)).toBe(false);
}

beforeAll(() => {
  th1 = getTestHost('th1');
  host = new SshHost('th1', { sshConfig: th1.sshConfig });
  scratch = mkdtempSync(join(tmpdir(), 'spectune-ssh-test-'));
});
afterAll(async () => {
  await host?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('SshHost.exec', () => {
  it('runs argv on the host and returns the result whatever the exit code', async () => {
    const ok = await host.exec(['hostname']);
    expect(ok).toMatchObject({ host: 'th1', argv: ['hostname'], exitCode: 0, stdout: 'th1\n', timedOut: false });
    const fail = await host.exec(['sh', '-c', 'echo out; echo err >&2; exit 3']);
    expect(fail).toMatchObject({ exitCode: 3, stdout: 'out\n', stderr: 'err\n' });
    const slow = await host.exec(['sleep', '5'], { timeoutMs: 300 });
    expect(slow.timedOut).toBe(true);
  });

  it('passes hostile strings through as data: exact round trip, nothing executed', async () => {
    const mark = `/tmp/spectune-pwned-${run}`;
    const attacks = makeAttacks(mark);
    const all = [...HOSTILE, ...attacks];
    const r = await host.exec(['printf', '%s\\0', ...all]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout.split('\0').slice(0, -1)).toEqual(all);
    for (const a of attacks) {
      const unit = await host.exec(['systemctl', 'show', '-p', 'LoadState', '--', a]);
      expect(unit.stdout).not.toContain('LoadState=loaded');
    }
    await expectNoneExist(attacks.map((_, i) => `${mark}-${i + 1}`));
  });

  it('lets concurrent first commands share one connection set-up', async () => {
    const fresh = new SshHost('th1', { sshConfig: th1.sshConfig });
    try {
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) => fresh.exec(['echo', String(i)])));
      expect(results.map((x) => x.stdout.trim())).toEqual(Array.from({ length: 12 }, (_, i) => String(i)));
    } finally {
      await fresh.close();
    }
  });

  it('multiplexes: a command costs milliseconds once connected', async () => {
    const N = 20;
    const t0 = performance.now();
    for (let i = 0; i < N; i++) await host.exec(['true']);
    const muxMs = (performance.now() - t0) / N;
    const t1 = performance.now();
    for (let i = 0; i < 5; i++)
      execFileSync('ssh', ['-F', th1.sshConfig, '-o', 'ControlMaster=no', '-o', 'ControlPath=none', 'th1', 'true']);
    const plainMs = (performance.now() - t1) / 5;
    console.log(`ssh per command: multiplexed ${muxMs.toFixed(1)} ms, new connection ${plainMs.toFixed(1)} ms`);
    // absolute numbers depend on the machine's load (ssh's own start-up is ~5 ms idle, 100+ ms under load)
    expect(muxMs).toBeLessThan(plainMs);
  });
});

describe('SshHost files', () => {
  const dir = `/root/spectune test ${run}/it's "dir"`;

  it('writes atomically with the mode asked for, and reads back exactly', async () => {
    const path = `${dir}/x; touch y.conf`;
    const content = `[Service]\nEnvironment="A=$(id)" 'B=\`id\`'\nünïcödé ✓\n${HOSTILE.join('\n')}\n`;
    await host.writeFile(path, content, { mode: 0o600 });
    expect(await host.readFile(path)).toBe(content);
    const st = await host.exec(['stat', '-c', '%a', '--', path]);
    expect(st.stdout.trim()).toBe('600');
    const ls = await host.exec(['ls', '-A', '--', dir]);
    expect(ls.stdout).toBe('x; touch y.conf\n');
    await expectNoneExist([`${dir}/y.conf`, '/root/y.conf']);
  });

  it('never exposes a half-written file to a concurrent reader', async () => {
    const path = `${dir}/big.conf`;
    const size = 400_000;
    await host.writeFile(path, 'a'.repeat(size));
    const reader = host.exec(['sh', '-c', 'for i in $(seq 400); do wc -c < "$1"; done | sort -u', 'reader', path]);
    for (let i = 0; i < 15; i++) await host.writeFile(path, (i % 2 ? 'a' : 'b').repeat(size));
    const sizes = (await reader).stdout.trim().split('\n');
    expect(sizes).toEqual([String(size)]);
  });

  it('reports a missing file as E_FILE_NOT_FOUND', async () => {
    await expect(host.readFile(`${dir}/missing`)).rejects.toMatchObject({ code: 'E_FILE_NOT_FOUND' });
  });

  afterAll(async () => {
    await host.exec(['rm', '-rf', '--', `/root/spectune test ${run}`]);
  });
});

describe('SshHost errors', () => {
  it('unreachable host: E_SSH_UNREACHABLE, one line', async () => {
    const nobody = new SshHost(`root@${th1.unusedIp}`, { sshConfig: th1.sshConfig, connectTimeoutSec: 5 });
    const err = await nobody.exec(['true']).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'E_SSH_UNREACHABLE' });
    expect((err as Error).message).toMatch(/No route to host|timed out/);
    const refused = new SshHost('refused', {
      sshConfig: tempConfig('refused', [`HostName ${th1.ip}`, 'Port 1', 'BatchMode yes']),
    });
    const err2 = await refused.exec(['true']).catch((e: unknown) => e);
    expect(err2).toMatchObject({ code: 'E_SSH_UNREACHABLE', message: expect.stringContaining('Connection refused') });
    expect((err2 as Error).message).not.toContain('\n');
    await Promise.all([nobody.close(), refused.close()]);
  });

  it('wrong key: E_SSH_AUTH', async () => {
    const key = join(scratch, 'wrong_ed25519');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
    const knownHosts = readFileSync(th1.sshConfig, 'utf8').match(/UserKnownHostsFile (\S+)/)?.[1] ?? '';
    const cfg = tempConfig('wrongkey', [
      `HostName ${th1.ip}`,
      'User root',
      `IdentityFile ${key}`,
      'IdentitiesOnly yes',
      `UserKnownHostsFile ${knownHosts}`,
      'StrictHostKeyChecking yes',
    ]);
    const h = new SshHost('wrongkey', { sshConfig: cfg });
    await expect(h.exec(['true'])).rejects.toMatchObject({
      code: 'E_SSH_AUTH',
      message: expect.stringContaining('Permission denied'),
    });
    await h.close();
  });

  it('unknown or changed host key: refused with E_SSH_HOSTKEY, known_hosts untouched', async () => {
    const empty = join(scratch, 'known_hosts_empty');
    writeFileSync(empty, '');
    const base = [
      `HostName ${th1.ip}`,
      'User root',
      `IdentityFile ${th1.sshConfig.replace(/config$/, 'id_ed25519')}`,
      'IdentitiesOnly yes',
    ];
    const unknown = new SshHost('unknownkey', {
      sshConfig: tempConfig('unknownkey', [...base, `UserKnownHostsFile ${empty}`]),
    });
    const err = await unknown.exec(['touch', `/tmp/spectune-should-not-run-${run}`]).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'E_SSH_HOSTKEY', hint: expect.stringContaining('never disables') });
    expect(readFileSync(empty, 'utf8')).toBe('');
    const other = getTestHost('th2');
    const otherKey = readFileSync(other.sshConfig.replace(/ssh\/config$/, 'th2/keys/ssh_host_ed25519_key.pub'), 'utf8')
      .split(' ')
      .slice(0, 2)
      .join(' ');
    const wrong = join(scratch, 'known_hosts_wrong');
    writeFileSync(wrong, `${th1.ip} ${otherKey}\n`);
    const changed = new SshHost('changedkey', {
      sshConfig: tempConfig('changedkey', [...base, `UserKnownHostsFile ${wrong}`]),
    });
    await expect(changed.exec(['true'])).rejects.toMatchObject({
      code: 'E_SSH_HOSTKEY',
      message: expect.stringContaining('changed'),
    });
    await expectNoneExist([`/tmp/spectune-should-not-run-${run}`]);
    await Promise.all([unknown.close(), changed.close()]);
  });
});

describe('SshHost.stream and close', () => {
  it('follows a journal as it is written', async () => {
    const unit = `spectune-stream-${run}`;
    const s = host.stream(['journalctl', '-f', '-n', '0', '-o', 'json', '-u', `${unit}.service`]);
    let seen = '';
    s.stdout.setEncoding('utf8').on('data', (d: string) => {
      seen += d;
    });
    // the unit repeats its line, so a journalctl that starts following late still sees one
    await host.exec([
      'systemd-run',
      '--quiet',
      `--unit=${unit}`,
      'node',
      '-e',
      'setInterval(() => console.log("marker-from-node"), 100)',
    ]);
    const t0 = Date.now();
    while (!seen.includes('"MESSAGE":"marker-from-node"') && Date.now() - t0 < 10_000)
      await new Promise((r) => setTimeout(r, 50));
    s.kill();
    await s.exited;
    await host.exec(['systemctl', 'stop', `${unit}.service`]);
    const line = seen.split('\n').find((l) => l.includes('"MESSAGE":"marker-from-node"')) ?? '{}';
    expect(JSON.parse(line)).toMatchObject({ MESSAGE: 'marker-from-node', _SYSTEMD_UNIT: `${unit}.service` });
  });

  it('kill() also ends the remote command', async () => {
    const s = host.stream(['sh', '-c', 'echo ready; exec sleep 4242']);
    await new Promise((r) => s.stdout.once('data', r));
    expect((await host.exec(['pgrep', '-f', 'sleep 4242'])).exitCode).toBe(0);
    s.kill();
    await s.exited;
    let alive = true;
    for (let i = 0; i < 40 && alive; i++) {
      alive = (await host.exec(['pgrep', '-f', 'sleep 4242'])).exitCode === 0;
      if (alive) await new Promise((r) => setTimeout(r, 50));
    }
    expect(alive).toBe(false);
  });

  it('replaces a control directory that vanished while idle by a new private one', async () => {
    const h = new SshHost('th1', { sshConfig: th1.sshConfig });
    await h.exec(['true']);
    const dir = (h as unknown as { controlDir: string }).controlDir;
    execFileSync('ssh', ['-o', `ControlPath=${dir}/%C`, '-F', th1.sshConfig, '-O', 'exit', 'th1'], { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
    expect((await h.exec(['hostname'])).stdout).toBe('th1\n');
    const next = (h as unknown as { controlDir: string }).controlDir;
    expect(next).not.toBe(dir);
    expect(statSync(next).mode & 0o777).toBe(0o700);
    await h.close();
    expect(existsSync(next)).toBe(false);
  });

  it('close() stops the control master and removes its private directory', async () => {
    const h = new SshHost('th1', { sshConfig: th1.sshConfig });
    await h.exec(['true']);
    const dir = (h as unknown as { controlDir: string }).controlDir;
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    await h.close();
    expect(existsSync(dir)).toBe(false);
  });
});
