// The per-unit host lock on a real filesystem (the process-manager host maps /var/lib/spectune into a temp root):
// exactly one of many racers wins, the others are told who holds it and since when; a stale lock is reported as such
// and broken only on request, with what it breaks said; release removes only our own lock.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createProcmanHost } from '../app/demo-host.js';
import type { SpectuneEvent } from '../tune/events.js';
import { createProcessManager, type ProcessManager } from '../procman/index.js';
import { acquireUnitLock, lockPath, type HeldLock } from './host-lock.js';
import { judgeLock, parseLockRecord, renderLockRecord, type LockRecord } from './record.js';

const UNIT = 'lock-test.service';
let pm: ProcessManager | null = null;
afterEach(async () => {
  await pm?.close();
  pm = null;
});

// A host whose /var/lib/spectune is a fresh temp folder.
function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'spectune-lock-'));
  pm = createProcessManager(join(dir, 'pm'));
  const root = join(dir, 'root');
  return { host: createProcmanHost(pm, root), file: join(root, lockPath(UNIT)) };
}

// A pid that surely is not running any more (a child that has exited and been reaped).
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid as number;
}

const rec = (over: Partial<LockRecord> = {}): LockRecord => ({
  token: 't1',
  owner: { user: 'alice', machine: 'ws1', pid: 4242 },
  command: 'tune',
  unit: UNIT,
  startedAt: 1_000_000,
  heartbeatAt: 1_000_000,
  leaseMs: 120_000,
  ...over,
});

describe('judging a lock found in the way', () => {
  const world = { hostNow: 1_030_000, machine: 'ws1', isPidAlive: (p: number) => p === 4242 };
  it('is live while its owner runs here and its heartbeat is within the lease', () => {
    expect(judgeLock(rec(), world)).toMatchObject({ stale: false, why: 'heartbeat 30 s ago' });
  });
  it('is stale when its owner ran on this machine and its pid is gone, whatever the heartbeat', () => {
    expect(judgeLock(rec({ owner: { user: 'alice', machine: 'ws1', pid: 7 } }), world)).toEqual({
      stale: true,
      why: 'pid 7 is not running on ws1',
      ownerGoneHere: true,
    });
  });
  it("judges another machine's lock by its heartbeat only", () => {
    const other = rec({ owner: { user: 'bob', machine: 'ws2', pid: 7 } });
    expect(judgeLock(other, world).stale).toBe(false);
    expect(judgeLock(other, { ...world, hostNow: 1_000_000 + 121_000 })).toMatchObject({
      stale: true,
      why: 'no heartbeat for 2.0 min (lease 2.0 min)',
      ownerGoneHere: false,
    });
  });
  it('treats a file that is not a lock record as stale', () => {
    expect(parseLockRecord('garbage{')).toBeNull();
    expect(parseLockRecord(JSON.stringify({ ...rec(), owner: { user: 'x' } }))).toBeNull();
    expect(parseLockRecord(renderLockRecord(rec()))).toEqual(rec());
    expect(judgeLock(null, world).stale).toBe(true);
  });
});

describe('the lock on the host', () => {
  it('lets exactly one of 20 racers take it; each other is refused naming the holder and its start time', async () => {
    const { host, file } = setup();
    const tries = Array.from({ length: 20 }, (_, i) =>
      acquireUnitLock({
        host,
        unit: UNIT,
        command: 'tune',
        onEvent: () => {},
        owner: { user: `op${i}`, machine: `m${i}`, pid: 1000 + i },
      }),
    );
    const out = await Promise.allSettled(tries);
    const won = out.filter((o): o is PromiseFulfilledResult<HeldLock> => o.status === 'fulfilled');
    expect(won).toHaveLength(1);
    const holder = won[0].value.record;
    const since = new Date(holder.startedAt).toISOString().replace(/\.\d{3}Z$/, 'Z');
    for (const o of out.filter((x) => x.status === 'rejected')) {
      const e = (o as PromiseRejectedResult).reason as { code: string; message: string };
      expect(e.code).toBe('E_LOCKED');
      expect(e.message).toMatch(
        new RegExp(
          `^local: ${UNIT.replace('.', '\\.')} is in use by ${holder.owner.user}@${holder.owner.machine} pid ${holder.owner.pid} \\(spectune tune\\) since ${since} \\(heartbeat \\d s ago\\)$`,
        ),
      );
    }
    expect(parseLockRecord(readFileSync(file, 'utf8'))?.token).toBe(holder.token);
    await won[0].value.release();
    expect(existsSync(file)).toBe(false);
    const again = await acquireUnitLock({ host, unit: UNIT, command: 'apply', onEvent: () => {} });
    await again.release();
  });

  it("reports a dead owner's lock as stale and breaks it only with breakLock, saying what it broke", async () => {
    const { host, file } = setup();
    const me = { user: 'root', machine: 'ws1', pid: process.pid };
    mkdirSync(join(file, '..'), { recursive: true });
    const dead = rec({
      owner: { user: 'alice', machine: 'ws1', pid: deadPid() },
      startedAt: Date.now(),
      heartbeatAt: Date.now(),
    });
    writeFileSync(file, renderLockRecord(dead));
    const refused = acquireUnitLock({ host, unit: UNIT, command: 'apply', onEvent: () => {}, owner: me });
    await expect(refused).rejects.toMatchObject({
      code: 'E_LOCKED',
      message: expect.stringMatching(
        /is locked by alice@ws1 pid \d+ \(spectune tune\) since .*, which looks dead: pid \d+ is not running on ws1$/,
      ),
    });
    await expect(refused).rejects.toMatchObject({ hint: expect.stringContaining('--break-lock') });
    expect(readFileSync(file, 'utf8')).toBe(renderLockRecord(dead));
    const events: SpectuneEvent[] = [];
    const held = await acquireUnitLock({
      host,
      unit: UNIT,
      command: 'apply',
      breakLock: true,
      onEvent: (e) => events.push(e),
      owner: me,
    });
    expect(events.map((e) => (e.type === 'log' ? `${e.level} ${e.message}` : ''))).toEqual([
      expect.stringMatching(
        /^warn local: broke the stale lock of lock-test\.service held by alice@ws1 pid \d+ \(spectune tune\) since .* \(pid \d+ is not running on ws1\)$/,
      ),
    ]);
    expect(parseLockRecord(readFileSync(file, 'utf8'))?.owner).toEqual(me);
    await held.release();
  });

  it('never breaks a live lock, even with breakLock', async () => {
    const { host, file } = setup();
    const live = await acquireUnitLock({
      host,
      unit: UNIT,
      command: 'tune',
      onEvent: () => {},
      owner: { user: 'alice', machine: 'ws2', pid: 1 },
    });
    const tryBreak = acquireUnitLock({
      host,
      unit: UNIT,
      command: 'rollback',
      breakLock: true,
      onEvent: () => {},
      owner: { user: 'bob', machine: 'ws3', pid: 2 },
    });
    await expect(tryBreak).rejects.toMatchObject({
      code: 'E_LOCKED',
      hint: expect.stringContaining('--break-lock breaks only a stale lock'),
    });
    expect(parseLockRecord(readFileSync(file, 'utf8'))?.token).toBe(live.record.token);
    await live.release();
  });

  it('release leaves alone a lock that is no longer ours', async () => {
    const { host, file } = setup();
    const held = await acquireUnitLock({ host, unit: UNIT, command: 'tune', onEvent: () => {} });
    const other = renderLockRecord(rec({ token: 'someone-else' }));
    writeFileSync(file, other);
    await held.release();
    expect(readFileSync(file, 'utf8')).toBe(other);
  });

  it("tune --resume breaks the lock of this machine's own killed tune, and says so; not an apply's", async () => {
    const { host, file } = setup();
    const me = { user: 'root', machine: 'ws1', pid: process.pid };
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(
      file,
      renderLockRecord(rec({ owner: { user: 'root', machine: 'ws1', pid: deadPid() }, command: 'apply' })),
    );
    await expect(
      acquireUnitLock({ host, unit: UNIT, command: 'tune', resumeOwn: true, onEvent: () => {}, owner: me }),
    ).rejects.toMatchObject({ code: 'E_LOCKED' });
    writeFileSync(file, renderLockRecord(rec({ owner: { user: 'root', machine: 'ws1', pid: deadPid() } })));
    const events: SpectuneEvent[] = [];
    const held = await acquireUnitLock({
      host,
      unit: UNIT,
      command: 'tune',
      resumeOwn: true,
      onEvent: (e) => events.push(e),
      owner: me,
    });
    expect(events.some((e) => e.type === 'log' && e.level === 'warn' && /broke the stale lock/.test(e.message))).toBe(
      true,
    );
    await held.release();
  });

  it('refreshes its heartbeat while held', async () => {
    const { host, file } = setup();
    const held = await acquireUnitLock({ host, unit: UNIT, command: 'tune', onEvent: () => {}, leaseMs: 4000 });
    await new Promise((r) => setTimeout(r, 2300));
    const now = parseLockRecord(readFileSync(file, 'utf8'));
    expect(now?.token).toBe(held.record.token);
    expect(now!.heartbeatAt).toBeGreaterThan(held.record.startedAt);
    await held.release();
  });
});
