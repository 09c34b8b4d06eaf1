// The test hosts themselves (scripts/testhost/up-all.sh): what every other e2e test relies on.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SshHost } from '../../src/host/ssh.js';
import { loadTestHosts, type TestHost } from './helpers/testhosts.js';

let hosts: TestHost[];
const conns = new Map<string, SshHost>();
const on = (h: TestHost): SshHost =>
  conns.get(h.name) ?? conns.set(h.name, new SshHost(h.name, { sshConfig: h.sshConfig })).get(h.name)!;
const run = `${process.pid}-${Date.now()}`;

beforeAll(() => {
  hosts = loadTestHosts();
});
afterAll(async () => {
  await Promise.all([...conns.values()].map((c) => c.close()));
});

describe('test hosts', () => {
  it('each runs systemd as PID 1 (booted), with its own hostname, machine id and host key', async () => {
    const seen = new Set<string>();
    for (const h of hosts) {
      const r = await on(h).exec([
        'sh',
        '-c',
        'cat /proc/1/comm; systemctl is-system-running; hostname; cat /etc/machine-id; cut -d" " -f2 /etc/ssh/ssh_host_ed25519_key.pub',
      ]);
      const [comm, state, name, machineId, hostKey] = r.stdout.trim().split('\n');
      expect([comm, name]).toEqual(['systemd', h.name]);
      expect(state).toMatch(/^(running|degraded)$/); // degraded: another test left a failed unit behind
      seen.add(machineId).add(hostKey);
    }
    expect(seen.size).toBe(hosts.length * 2);
  });

  it("run this machine's node, see the project read-only at /opt/spectune, and journal a node unit", async () => {
    for (const h of hosts) {
      const v = await on(h).exec(['node', '-p', 'process.version + " " + require("/opt/spectune/package.json").name']);
      expect(v.stdout.trim()).toBe(`${process.version} spectune`);
      const w = await on(h).exec(['touch', '/opt/spectune/should-not-exist']);
      expect(w.stderr).toMatch(/Read-only file system/);
      const unit = `testhost-node-${run}`;
      await on(h).exec([
        'systemd-run',
        '--quiet',
        '--wait',
        `--unit=${unit}`,
        'node',
        '-e',
        'console.log("journal-marker")',
      ]);
      const j = await on(h).exec(['journalctl', '-u', `${unit}.service`, '-o', 'json', '--no-pager']);
      const lines = j.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, string>);
      expect(lines.find((l) => l.MESSAGE === 'journal-marker')).toMatchObject({
        SYSLOG_IDENTIFIER: 'node',
        _SYSTEMD_UNIT: `${unit}.service`,
      });
    }
  });

  it('reach this machine at hostIp, but not each other nor anything else', async () => {
    const server: Server = createServer((_req, res) => res.end('from-this-machine'));
    const [a, b] = hosts;
    await new Promise<void>((r) => server.listen(0, a.hostIp, r));
    const port = (server.address() as { port: number }).port;
    try {
      const ok = await on(a).exec(['curl', '-sS', '--max-time', '5', `http://${a.hostIp}:${port}/`]);
      expect(ok.stdout).toBe('from-this-machine');
      const routes = await on(a).exec(['ip', 'route']);
      expect(routes.stdout).not.toMatch(/^default/m);
      if (b) {
        const other = await on(a).exec(['curl', '-sS', '--max-time', '2', `http://${b.ip}:22/`]);
        expect(other.exitCode).not.toBe(0);
      }
    } finally {
      server.close();
    }
  });

  it('enforce MemoryMax= on the memcg host (SIGKILL by the kernel)', async (ctx) => {
    const h = hosts.find((x) => x.memcg);
    if (!h) ctx.skip();
    const unit = `testhost-memhog-${run}`;
    try {
      await on(h!).exec([
        'systemd-run',
        '--quiet',
        '--wait',
        `--unit=${unit}`,
        '-p',
        'MemoryMax=50M',
        'node',
        '-e',
        'const a = []; for (let i = 0; i < 40; i++) a.push(Buffer.alloc(10 << 20, 1)); console.log("survived")',
      ]);
      const j = await on(h!).exec(['journalctl', '-u', `${unit}.service`, '-o', 'cat', '--no-pager']);
      expect(j.stdout).toContain('Main process exited, code=killed, status=9/KILL');
      expect(j.stdout.split('\n')).not.toContain('survived');
    } finally {
      await on(h!).exec(['systemctl', 'reset-failed', `${unit}.service`]);
    }
  });
});
