// Taking, refreshing and releasing the per-unit lock ON THE HOST (/var/lib/spectune/<unit>/lock), so two operators
// on two machines cannot change one unit at once. Taken by an atomic `ln` of a complete record (never check-then-write).
import { randomBytes } from 'node:crypto';
import { hostname, userInfo } from 'node:os';
import { ToolError, isToolError } from '../errors.js';
import type { LogEvent, Sink } from '../events.js';
import { expectOk } from '../host/command-result.js';
import type { Host } from '../host/types.js';
import { statePaths } from '../service/unit.js';
import {
  DEFAULT_LEASE_MS,
  describeHolder,
  judgeLock,
  parseLockRecord,
  renderLockRecord,
  type LockJudgement,
  type LockOwner,
  type LockRecord,
} from './record.js';

/** Commands are short; a host that does not answer in this time is treated as a failed lock operation. */
const LOCK_COMMAND_TIMEOUT_MS = 30_000;
/** The holder refreshes the heartbeat this many times per lease. */
const HEARTBEATS_PER_LEASE = 4;
/** Attempts to take the lock when it changes under us (released or broken by someone else meanwhile). */
const TAKE_ATTEMPTS = 3;

/** A lock this process holds; release() is idempotent and never throws. */
export interface HeldLock {
  host: Host;
  unit: string;
  path: string;
  record: LockRecord;
  release(): Promise<void>;
}

/** A request to take a unit's lock. */
export interface LockRequest {
  host: Host;
  unit: string;
  /** The command that takes it (tune, apply, rollback), shown to the operator it refuses. */
  command: string;
  /** Break a STALE lock found in the way (said in a warning); a live one is never broken. */
  breakLock?: boolean;
  /** `tune --resume`: break a lock left by a `spectune tune` of this machine whose pid is gone (said in a warning). */
  resumeOwn?: boolean;
  onEvent: Sink<LogEvent>;
  /** Overrides for tests: who we are, the lease, how a pid is checked. */
  owner?: LockOwner;
  leaseMs?: number;
  isPidAlive?: (pid: number) => boolean;
}

// Where a unit's lock lives on its host (next to the version history: current, good, dropins/).
export function lockPath(unit: string): string {
  return `${statePaths(unit).dir}/lock`;
}

// This process as a lock owner.
export function currentOwner(): LockOwner {
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    /* no passwd entry: keep "unknown" */
  }
  return { user, machine: hostname(), pid: process.pid };
}

// Whether a pid runs on this machine (EPERM: it runs, as another user).
export function isPidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// The host's clock (epoch ms), so leases compare times of one clock whoever checks them.
async function readHostClock(host: Host): Promise<number> {
  const r = await host.exec(['date', '+%s'], { timeoutMs: LOCK_COMMAND_TIMEOUT_MS });
  const s = Number(r.stdout.trim());
  return r.exitCode === 0 && Number.isFinite(s) && s > 0 ? s * 1000 : Date.now();
}

// Read the lock file; null when there is none.
async function readLockText(host: Host, path: string): Promise<string | null> {
  try {
    return await host.readFile(path);
  } catch (e) {
    if (isToolError(e) && e.code === 'E_FILE_NOT_FOUND') return null;
    throw e;
  }
}

// Write a complete record beside the lock and hard-link it into place: exactly one of two racers wins.
async function tryCreate(host: Host, path: string, rec: LockRecord): Promise<boolean> {
  const tmp = `${path}.new-${rec.token}`;
  await host.writeFile(tmp, renderLockRecord(rec), { mode: 0o644 });
  const ln = await host.exec(['ln', '-T', '--', tmp, path], { timeoutMs: LOCK_COMMAND_TIMEOUT_MS });
  await host.exec(['rm', '-f', '--', tmp], { timeoutMs: LOCK_COMMAND_TIMEOUT_MS });
  if (ln.exitCode === 0) return true;
  if (/exists/i.test(ln.stderr)) return false;
  expectOk(ln, `take the lock ${path}`);
  return false;
}

// The refusal: one line naming the holder and its start, and whether it looks dead.
function lockedError(
  host: Host,
  unit: string,
  path: string,
  rec: LockRecord | null,
  j: LockJudgement,
  breakLock: boolean,
): ToolError {
  const who = rec ? describeHolder(rec) : `an unreadable lock file ${path}`;
  if (j.stale) {
    return new ToolError('E_LOCKED', `${host.name}: ${unit} is locked by ${who}, which looks dead: ${j.why}`, {
      hint: `if no spectune works on ${unit} any more, run the command again with --break-lock (it prints what it breaks)`,
    });
  }
  const hint = breakLock
    ? `--break-lock breaks only a stale lock; stop that spectune first, or wait until its heartbeat is older than its lease (${Math.round((rec?.leaseMs ?? DEFAULT_LEASE_MS) / 1000)} s)`
    : `wait for that spectune to finish (or stop it); the lock is ${path}`;
  return new ToolError('E_LOCKED', `${host.name}: ${unit} is in use by ${who} (${j.why})`, { hint });
}

// Move a stale lock aside and check it is the one judged (a racer may have broken and retaken it meanwhile).
async function breakStale(
  req: LockRequest,
  path: string,
  judgedText: string,
  rec: LockRecord | null,
  j: LockJudgement,
  token: string,
): Promise<void> {
  const aside = `${path}.broken-${token}`;
  const mv = await req.host.exec(['mv', '-T', '--', path, aside], { timeoutMs: LOCK_COMMAND_TIMEOUT_MS });
  if (mv.exitCode !== 0) return; // gone meanwhile: the next attempt takes it or meets the new holder
  const moved = await readLockText(req.host, aside);
  if (moved !== judgedText) {
    await req.host.exec(['ln', '-T', '--', aside, path], { timeoutMs: LOCK_COMMAND_TIMEOUT_MS });
    await req.host.exec(['rm', '-f', '--', aside], { timeoutMs: LOCK_COMMAND_TIMEOUT_MS });
    throw new ToolError(
      'E_LOCKED',
      `${req.host.name}: the lock of ${req.unit} changed while breaking it; nothing was broken`,
      { hint: 'another spectune took it: check with the operator named by a new attempt' },
    );
  }
  await req.host.exec(['rm', '-f', '--', aside], { timeoutMs: LOCK_COMMAND_TIMEOUT_MS });
  const who = rec ? describeHolder(rec) : 'an unreadable lock file';
  req.onEvent({
    type: 'log',
    ts: Date.now(),
    level: 'warn',
    message: `${req.host.name}: broke the stale lock of ${req.unit} held by ${who} (${j.why})`,
  });
}

// Refresh heartbeatAt while we still hold the lock; stop (and say so) if someone broke it.
function startHeartbeat(req: LockRequest, path: string, rec: LockRecord): { stop(): Promise<void> } {
  let current = rec;
  let running: Promise<void> | null = null;
  let lost = false;
  const beat = async () => {
    const text = await readLockText(req.host, path);
    const found = text === null ? null : parseLockRecord(text);
    if (found?.token !== rec.token) {
      lost = true;
      const now = found ? `now held by ${describeHolder(found)}` : 'no lock is there now';
      req.onEvent({
        type: 'log',
        ts: Date.now(),
        level: 'warn',
        message: `${req.host.name}: the lock of ${req.unit} was broken by someone else (${now}); stop one of the two`,
      });
      return;
    }
    current = { ...current, heartbeatAt: await readHostClock(req.host) };
    await req.host.writeFile(path, renderLockRecord(current), { mode: 0o644 });
  };
  const timer = setInterval(
    () => {
      if (running || lost) return;
      running = beat()
        .catch(() => {
          /* a missed beat is retried on the next tick; the lease covers several */
        })
        .finally(() => {
          running = null;
        });
    },
    Math.max(1000, Math.floor(rec.leaseMs / HEARTBEATS_PER_LEASE)),
  );
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

// Remove the lock if it is still ours; a failure is said, not thrown (it must not hide the command's own outcome).
async function releaseLock(req: LockRequest, path: string, token: string): Promise<void> {
  try {
    const text = await readLockText(req.host, path);
    if (text !== null && parseLockRecord(text)?.token === token)
      expectOk(await req.host.exec(['rm', '-f', '--', path], { timeoutMs: LOCK_COMMAND_TIMEOUT_MS }));
  } catch (e) {
    req.onEvent({
      type: 'log',
      ts: Date.now(),
      level: 'warn',
      message: `${req.host.name}: could not release the lock ${path} (${(e as Error).message}); the next command will find it stale and --break-lock breaks it`,
    });
  }
}

// Take a unit's lock on its host, or throw E_LOCKED naming the holder; a stale one is broken only with breakLock.
export async function acquireUnitLock(req: LockRequest): Promise<HeldLock> {
  const path = lockPath(req.unit);
  const owner = req.owner ?? currentOwner();
  const leaseMs = req.leaseMs ?? DEFAULT_LEASE_MS;
  const alive = req.isPidAlive ?? isPidAlive;
  for (let attempt = 0; attempt < TAKE_ATTEMPTS; attempt++) {
    const token = randomBytes(8).toString('hex');
    const now = await readHostClock(req.host);
    const rec: LockRecord = {
      token,
      owner,
      command: req.command,
      unit: req.unit,
      startedAt: now,
      heartbeatAt: now,
      leaseMs,
    };
    if (await tryCreate(req.host, path, rec)) {
      const hb = startHeartbeat(req, path, rec);
      let released: Promise<void> | null = null;
      return {
        host: req.host,
        unit: req.unit,
        path,
        record: rec,
        release: () => (released ??= hb.stop().then(() => releaseLock(req, path, token))),
      };
    }
    const text = await readLockText(req.host, path);
    if (text === null) continue;
    const found = parseLockRecord(text);
    const j = judgeLock(found, { hostNow: await readHostClock(req.host), machine: owner.machine, isPidAlive: alive });
    const ownDeadTune = req.resumeOwn === true && j.ownerGoneHere && found?.command === 'tune';
    if (!(req.breakLock && j.stale) && !ownDeadTune)
      throw lockedError(req.host, req.unit, path, found, j, req.breakLock === true);
    await breakStale(req, path, text, found, j, token);
  }
  throw new ToolError('E_LOCKED', `${req.host.name}: the lock of ${req.unit} kept changing while taking it`, {
    hint: 'another spectune is starting on this unit; run the command again to see who holds it',
  });
}

// Take the locks of several units (every rank of a multi-host target) in order; all or none.
export async function acquireUnitLocks(reqs: LockRequest[]): Promise<{ release(): Promise<void> }> {
  const held: HeldLock[] = [];
  const releaseAll = async () => {
    for (const h of [...held].reverse()) await h.release();
  };
  try {
    for (const r of reqs) held.push(await acquireUnitLock(r));
  } catch (e) {
    await releaseAll();
    throw e;
  }
  return { release: releaseAll };
}
