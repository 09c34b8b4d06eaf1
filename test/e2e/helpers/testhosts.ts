// Where the real systemd + sshd test hosts are: read hosts.json written by scripts/testhost/up-all.sh.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** One booted test host (see scripts/testhost/up-all.sh). */
export interface TestHost {
  /** ssh_config alias, e.g. "th1" (use with sshConfig). */
  name: string;
  /** The host's address inside its network namespace. */
  ip: string;
  /** This machine's end of the veth: reachable from inside the host (e.g. a bench server on this machine). */
  hostIp: string;
  /** The shared ssh config with a `Host thN` block per host. */
  sshConfig: string;
  /** True when MemoryMax= is enforced on this host (own writable memory cgroup). */
  memcg: boolean;
  /** A valid but unused address in the host's subnet (for unreachable-host tests). */
  unusedIp: string;
  /** PID of the host's systemd-nspawn launcher on this machine. */
  pid: number;
}

const DEFAULT_ENV = '/var/lib/spectune-testhost/hosts.env';
const HOW_TO_START =
  'boot them with `sudo bash scripts/testhost/up-all.sh` (or run the whole suite with `sudo bash scripts/test-all.sh`)';

// hosts.json lives next to hosts.env, whose path CI exports as SPECTUNE_TESTHOSTS_ENV.
export function testHostsJsonPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(dirname(env.SPECTUNE_TESTHOSTS_ENV || DEFAULT_ENV), 'hosts.json');
}

// Is a launcher pid still alive? (a stale hosts.json or slurm.json after a reboot must not pass as "up")
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// The booted test hosts; throws a clear, actionable error when they are not up.
export function loadTestHosts(env: NodeJS.ProcessEnv = process.env): TestHost[] {
  const path = testHostsJsonPath(env);
  if (!existsSync(path)) throw new Error(`spectune test hosts are not up (no ${path}): ${HOW_TO_START}`);
  const parsed = JSON.parse(readFileSync(path, 'utf8')) as { hosts: TestHost[] };
  const hosts = parsed.hosts ?? [];
  if (hosts.length === 0) throw new Error(`${path} lists no hosts: ${HOW_TO_START}`);
  const dead = hosts.filter((h) => !isAlive(h.pid)).map((h) => h.name);
  if (dead.length)
    throw new Error(`spectune test hosts ${dead.join(', ')} are not running (stale ${path}): ${HOW_TO_START}`);
  return hosts;
}

// The test host with a given name (th1, th2, ...).
export function getTestHost(name: string, env: NodeJS.ProcessEnv = process.env): TestHost {
  const host = loadTestHosts(env).find((h) => h.name === name);
  if (!host) throw new Error(`no test host named ${name} in ${testHostsJsonPath(env)}`);
  return host;
}
