// The per-unit host lock and the full-disk store error on a real systemd test host, through real SSH and the built
// CLI: of many racers over two SSH connections exactly one takes the lock; a second command is refused in one line
// naming the owner; a dry run takes no lock; a dead owner's lock is reported as stale and broken only with
// --break-lock, which says what it broke; a store on a full tmpfs is one E_STORE_FULL line and changes nothing.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openHost } from '../../src/host/index.js';
import type { Host } from '../../src/host/types.js';
import { acquireUnitLock, lockPath, parseLockRecord, renderLockRecord, type HeldLock } from '../../src/lock/index.js';
import { loadTestHosts, type TestHost } from './helpers/testhosts.js';
import { installSimUnit, removeSimUnit, runCli, sshRun, writeTuneConfig } from './tune-support.js';

const UNIT = 'spectune-lock-e2e.service';
const PORT = 31731;

// The plain (non-event) lines of stderr: what an operator reads.
const plain = (stderr: string) => stderr.split('\n').filter((l) => l.trim() && !l.startsWith('{'));

// A pid that is surely not running on this machine.
const deadPid = () => spawnSync(process.execPath, ['-e', '0']).pid as number;

describe('the unit lock on a real host', () => {
  let host: TestHost;
  let a: Host;
  let b: Host;
  let config: string;
  const target = () => [
    '--host',
    host.name,
    '--ssh-config',
    host.sshConfig,
    '--unit',
    UNIT,
    '--endpoint',
    `http://${host.ip}:${PORT}`,
  ];

  beforeAll(async () => {
    host = loadTestHosts().find((h) => h.name === 'th3') ?? loadTestHosts()[0];
    installSimUnit(host, UNIT, PORT);
    config = writeTuneConfig(host, UNIT, PORT).config;
    a = await openHost({ target: host.name, sshConfig: host.sshConfig });
    b = await openHost({ target: host.name, sshConfig: host.sshConfig });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    if (host) removeSimUnit(host, UNIT);
  });

  it('lets exactly one of 12 racers over two SSH connections take it; the others are told who holds it', async () => {
    const tries = Array.from({ length: 12 }, (_, i) =>
      acquireUnitLock({
        host: i % 2 ? a : b,
        unit: UNIT,
        command: 'tune',
        onEvent: () => {},
        owner: { user: 'op', machine: `ws${i}`, pid: 100 + i },
      }),
    );
    const out = await Promise.allSettled(tries);
    const won = out.filter((o): o is PromiseFulfilledResult<HeldLock> => o.status === 'fulfilled');
    expect(won).toHaveLength(1);
    const who = `op@${won[0].value.record.owner.machine} pid ${won[0].value.record.owner.pid} (spectune tune) since`;
    for (const o of out)
      if (o.status === 'rejected')
        expect(o.reason).toMatchObject({
          code: 'E_LOCKED',
          message: expect.stringContaining(`${UNIT} is in use by ${who}`),
        });
    expect(parseLockRecord(sshRun(host, `cat ${lockPath(UNIT)}`))?.token).toBe(won[0].value.record.token);
    await won[0].value.release();
    expect(sshRun(host, `test -e ${lockPath(UNIT)} && echo locked || echo free`).trim()).toBe('free');
  });

  it('refuses apply and tune in one line while another holds it; a dry run takes no lock and succeeds', async () => {
    const held = await acquireUnitLock({
      host: a,
      unit: UNIT,
      command: 'tune',
      onEvent: () => {},
      owner: { user: 'alice', machine: 'ws1', pid: 4242 },
    });
    try {
      const apply = await runCli(['apply', ...target(), '--set', 'speculative_num_steps=4'], {});
      expect(apply.code).toBe(1);
      expect(plain(apply.stderr)).toEqual([
        expect.stringMatching(
          new RegExp(
            `^spectune: th\\d: ${UNIT.replace(/\./g, '\\.')} is in use by alice@ws1 pid 4242 \\(spectune tune\\) since \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ \\(heartbeat \\d+ s ago\\) \\(hint: wait for that spectune to finish`,
          ),
        ),
      ]);
      const tune = await runCli(['tune', '-c', config, '--ssh-config', host.sshConfig], {});
      expect(tune.code).toBe(1);
      expect(plain(tune.stderr)).toEqual([expect.stringContaining('is in use by alice@ws1 pid 4242 (spectune tune)')]);
      const dry = await runCli(['apply', ...target(), '--set', 'speculative_num_steps=4', '--dry-run'], {});
      expect(dry.code, dry.stderr).toBe(0);
      expect(parseLockRecord(sshRun(host, `cat ${lockPath(UNIT)}`))?.token).toBe(held.record.token);
      expect(
        sshRun(host, `test -e /etc/systemd/system/${UNIT}.d/90-spectune.conf && echo deployed || echo none`).trim(),
      ).toBe('none');
    } finally {
      await held.release();
    }
  });

  it("reports a dead owner's lock as stale in one line, and apply --break-lock breaks it saying what it broke", async () => {
    const pid = deadPid();
    const me = (await import('node:os')).hostname();
    const stale = {
      token: 'dead',
      owner: { user: 'root', machine: me, pid },
      command: 'tune',
      unit: UNIT,
      startedAt: Date.now() - 60_000,
      heartbeatAt: Date.now() - 50_000,
      leaseMs: 120_000,
    };
    await a.writeFile(lockPath(UNIT), renderLockRecord(stale));
    const refused = await runCli(['apply', ...target(), '--set', 'speculative_num_steps=4'], {});
    expect(refused.code).toBe(1);
    expect(plain(refused.stderr)).toEqual([
      expect.stringMatching(
        new RegExp(
          `is locked by root@${me} pid ${pid} \\(spectune tune\\) since \\S+Z, which looks dead: pid ${pid} is not running on ${me} \\(hint: .*--break-lock`,
        ),
      ),
    ]);
    const broke = await runCli(['apply', ...target(), '--set', 'speculative_num_steps=4', '--break-lock'], {});
    expect(broke.code, broke.stderr).toBe(0);
    expect(
      plain(broke.stderr).some(
        (l) =>
          l.includes(`broke the stale lock of ${UNIT} held by root@${me} pid ${pid} (spectune tune)`) &&
          l.endsWith(`(pid ${pid} is not running on ${me})`),
      ),
    ).toBe(true);
    expect(sshRun(host, `test -e ${lockPath(UNIT)} && echo locked || echo free`).trim()).toBe('free');
    expect(sshRun(host, `cat /etc/systemd/system/${UNIT}.d/90-spectune.conf`)).toContain('--speculative-num-steps 4');
    // back to the operator's unit for the next test (rollback takes the lock too, and releases it)
    const back = await runCli(['rollback', ...target(), '--to', 'none'], {});
    expect(back.code, back.stderr).toBe(0);
    expect(sshRun(host, `test -e ${lockPath(UNIT)} && echo locked || echo free`).trim()).toBe('free');
  });

  // Found before any host is touched since the local preflight (issue 19); a disk that fills mid-campaign is still
  // E_STORE_FULL (test/unit/store-full.test.ts, the disk-full fault).
  it('a store on a full disk: one line before any host is touched, nothing deployed, no lock left', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'spectune-full-e2e-'));
    const disk = join(dir, 'disk');
    mkdirSync(disk);
    expect(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', disk]).status).toBe(0);
    try {
      writeFileSync(join(disk, 'filler'), Buffer.alloc(64 * 1024 - 4096));
      try {
        writeFileSync(join(disk, 'filler2'), Buffer.alloc(8192));
      } catch {
        /* full now */
      }
      const cfg = join(dir, 'spectune.yaml');
      writeFileSync(cfg, readFileSync(config, 'utf8').replace('store: ./tune.db', `store: ${join(disk, 'tune.db')}`));
      const r = await runCli(['tune', '-c', cfg, '--ssh-config', host.sshConfig], {});
      expect(r.code).toBe(1);
      expect(plain(r.stderr)).toEqual([
        expect.stringMatching(
          /^spectune: store \S+tune\.db: cannot write it \(at \S+\): no space left on device \(ENOSPC\), \d+ KiB free; nothing was changed on any host \(hint: free space on that file system, or point store: in spectune\.yaml .*\)$/,
        ),
      ]);
      expect(
        sshRun(
          host,
          `test -e ${lockPath(UNIT)} && echo locked || echo free; test -e /etc/systemd/system/${UNIT}.d/90-spectune.conf && echo deployed || echo none`,
        )
          .trim()
          .split('\n'),
      ).toEqual(['free', 'none']);
    } finally {
      spawnSync('umount', [disk]);
    }
  });
});
