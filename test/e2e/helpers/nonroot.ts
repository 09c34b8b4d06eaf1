// A real non-root local user for the tests of spectune's local state (tests run as root, where chmod stops no write):
// created with useradd when absent, and the built CLI run as that user with a clean environment (runuser + env -i).
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The project root and its built CLI. */
const ROOT = resolve(import.meta.dirname, '../../..');
const BIN = join(ROOT, 'bin/spectune.js');
/** The user the tests create (never a user of the machine's own). */
export const NONROOT_USER = 'spectune-nonroot';

/** A local user: name, ids and home. */
export interface LocalUser {
  name: string;
  uid: number;
  gid: number;
  home: string;
}

// The test user, created (with a home directory) when absent.
export function ensureNonRootUser(name = NONROOT_USER): LocalUser {
  if (spawnSync('id', ['-u', name]).status !== 0) {
    const r = spawnSync('useradd', ['--create-home', '--shell', '/bin/sh', name], { encoding: 'utf8' });
    if (r.status !== 0 && spawnSync('id', ['-u', name]).status !== 0) throw new Error(`useradd ${name}: ${r.stderr}`);
  }
  const uid = Number(spawnSync('id', ['-u', name], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', name], { encoding: 'utf8' }).stdout.trim());
  const home = spawnSync('getent', ['passwd', name], { encoding: 'utf8' }).stdout.split(':')[5] ?? `/home/${name}`;
  mkdirSync(home, { recursive: true });
  chownSync(home, uid, gid);
  return { name, uid, gid, home };
}

// Copy the test hosts' ssh config, key and known_hosts where the user can read them (host-key checking stays on).
export function giveSshConfig(u: LocalUser, sshConfig: string): string {
  const src = resolve(sshConfig, '..');
  const dir = join(u.home, 'test-ssh');
  mkdirSync(dir, { recursive: true });
  let text = readFileSync(sshConfig, 'utf8');
  for (const f of ['id_ed25519', 'known_hosts']) {
    copyFileSync(join(src, f), join(dir, f));
    text = text.replaceAll(join(src, f), join(dir, f));
  }
  writeFileSync(join(dir, 'config'), text);
  for (const f of ['config', 'id_ed25519', 'known_hosts']) {
    chownSync(join(dir, f), u.uid, u.gid);
    chmodSync(join(dir, f), 0o600);
  }
  chownSync(dir, u.uid, u.gid);
  chmodSync(dir, 0o700);
  return join(dir, 'config');
}

/** One CLI run's result. */
export interface UserRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

// Run the built CLI as the user, with only HOME, PATH and `env` set, in `cwd`.
export function runCliAs(
  u: LocalUser,
  args: string[],
  o: { env?: Record<string, string>; cwd?: string } = {},
): Promise<UserRun> {
  const vars = Object.entries({
    HOME: u.home,
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    USER: u.name,
    LOGNAME: u.name,
    ...o.env,
  }).map(([k, v]) => `${k}=${v}`);
  return new Promise((done) => {
    const child = spawn('runuser', ['-u', u.name, '--', 'env', '-i', ...vars, process.execPath, BIN, ...args], {
      cwd: o.cwd ?? u.home,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}
