import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createProcessManager, type ProcessManager } from '../procman/index.js';
import { parseUnitState } from '../service/index.js';
import { createProcmanHost } from './demo-host.js';

const UNIT = 'shim-test.service';
let pm: ProcessManager | null = null;
afterEach(async () => {
  await pm?.close();
  pm = null;
});

// A manager with one unit that prints a line and idles, written as a unit file under the shim's root.
function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'spectune-shim-'));
  const root = join(dir, 'root');
  mkdirSync(join(root, 'etc/systemd/system'), { recursive: true });
  const script = "console.log('hello from the unit'); setInterval(() => {}, 1000)";
  writeFileSync(
    join(root, 'etc/systemd/system', UNIT),
    `[Service]\nExecStart=${process.execPath} -e "${script}"\nRestart=always\nTimeoutStopSec=2\n`,
  );
  pm = createProcessManager(join(dir, 'pm'));
  return { host: createProcmanHost(pm, root), pm };
}

describe('the systemctl/journalctl shim over the process manager', () => {
  it('answers show, cat, journalctl and file commands as a systemd host would', async () => {
    const { host } = setup();
    await host.exec(['systemctl', 'daemon-reload']);
    await host.exec(['systemctl', 'start', UNIT]);
    const state = parseUnitState(
      (await host.exec(['systemctl', 'show', UNIT, '-p', 'Id,ActiveState,SubState,MainPID,NRestarts', '--no-pager']))
        .stdout,
    );
    expect(state.activeState).toBe('active');
    const cat = await host.exec(['systemctl', 'cat', '--no-pager', UNIT]);
    expect(cat.stdout).toContain(`# /etc/systemd/system/${UNIT}`);
    await host.writeFile(`/etc/systemd/system/${UNIT}.d/90-spectune.conf`, '[Service]\nTimeoutStopSec=3\n');
    expect((await host.exec(['systemctl', 'cat', '--no-pager', UNIT])).stdout).toContain('90-spectune.conf');
    expect((await host.exec(['ls', '-1', '--', `/etc/systemd/system/${UNIT}.d`])).stdout).toBe('90-spectune.conf\n');
    await new Promise((r) => setTimeout(r, 500));
    const journal = await host.exec(['journalctl', '-u', UNIT, '-o', 'json', '--no-pager', '-n', '5000']);
    expect(journal.stdout).toContain('hello from the unit');
    const last = await host.exec(['journalctl', '-u', UNIT, '-n', '1', '-o', 'json', '--no-pager']);
    expect(last.stdout.trim().split('\n')).toHaveLength(1);
    expect((await host.exec(['journalctl', '-k', '-o', 'short', '--no-pager'])).exitCode).not.toBe(0);
    await expect(host.readFile('/var/lib/spectune/x/good')).rejects.toMatchObject({ code: 'E_FILE_NOT_FOUND' });
  });
});
