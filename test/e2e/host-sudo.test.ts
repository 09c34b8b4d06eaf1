// SshHost's sudo mode against real sudo on a test host: a user with passwordless sudo, and one without.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SshHost } from '../../src/host/ssh.js';
import { getTestHost, type TestHost } from './helpers/testhosts.js';

let th1: TestHost;
let root: SshHost;
let hasSudo = false;
const opened: SshHost[] = [];
const run = `${process.pid}-${Date.now()}`;

// Create the two users (idempotent) with root's authorized key; only spectune-sudo may sudo.
const SETUP = `set -e
for u in spectune-sudo spectune-nosudo; do
  id "$u" >/dev/null 2>&1 || useradd -m -s /bin/bash "$u"
  install -d -m 700 -o "$u" -g "$u" "/home/$u/.ssh"
  install -m 600 -o "$u" -g "$u" /root/.ssh/authorized_keys "/home/$u/.ssh/authorized_keys"
done
echo 'spectune-sudo ALL=(root) NOPASSWD: ALL' > /etc/sudoers.d/spectune-test
chmod 440 /etc/sudoers.d/spectune-test`;

function as(user: string, sudo: boolean): SshHost {
  const h = new SshHost(`${user}@th1`, { sshConfig: th1.sshConfig, sudo });
  opened.push(h);
  return h;
}

beforeAll(async () => {
  th1 = getTestHost('th1');
  root = new SshHost('th1', { sshConfig: th1.sshConfig });
  hasSudo = (await root.exec(['sh', '-c', 'command -v sudo'])).exitCode === 0;
  if (hasSudo) expect((await root.exec(['sh', '-c', SETUP])).stderr).toBe('');
});
afterAll(async () => {
  await root?.exec(['rm', '-f', '--', `/etc/spectune-sudo-${run}.conf`]);
  await Promise.all([root?.close(), ...opened.map((h) => h.close())]);
});

describe('SshHost sudo mode', () => {
  it('says E_NO_PERMISSION when sudo is not installed', async (ctx) => {
    if (hasSudo) ctx.skip(); // covered by the tests below on hosts with sudo
    await expect(as('root', true).exec(['true'])).rejects.toMatchObject({
      code: 'E_NO_PERMISSION',
      message: expect.stringContaining('not installed'),
    });
  });

  it('runs commands and atomic writes as root through sudo -n', async (ctx) => {
    if (!hasSudo) ctx.skip(); // rootfs built before sudo joined TESTHOST_PACKAGES: re-run scripts/testhost/up-all.sh
    const h = as('spectune-sudo', true);
    expect((await h.exec(['id', '-un'])).stdout.trim()).toBe('root');
    const path = `/etc/spectune-sudo-${run}.conf`;
    await h.writeFile(path, 'x=1\n');
    const st = await root.exec(['stat', '-c', '%U %a', '--', path]);
    expect(st.stdout.trim()).toBe('root 644');
    expect(await h.readFile(path)).toBe('x=1\n');
  });

  it('says E_NO_PERMISSION, in one line, when sudo wants a password', async (ctx) => {
    if (!hasSudo) ctx.skip();
    const err = await as('spectune-nosudo', true)
      .exec(['systemctl', 'daemon-reload'])
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'E_NO_PERMISSION', message: expect.stringContaining('a password is required') });
    expect((err as Error).message).not.toContain('\n');
  });

  it('without sudo, a write the user may not do fails with E_NO_PERMISSION and leaves nothing behind', async (ctx) => {
    if (!hasSudo) ctx.skip();
    const path = `/etc/spectune-nosudo-${run}.conf`;
    await expect(as('spectune-nosudo', false).writeFile(path, 'x=1\n')).rejects.toMatchObject({
      code: 'E_NO_PERMISSION',
    });
    const left = await root.exec(['sh', '-c', 'ls /etc | grep -c "^spectune-nosudo" || true']);
    expect(left.stdout.trim()).toBe('0');
  });
});
