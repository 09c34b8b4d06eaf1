// The per-unit host lock's record and the pure decisions on it: who holds it, since when, and whether it is stale.

/** Who took a lock: the operator's user, machine and process. */
export interface LockOwner {
  user: string;
  machine: string;
  pid: number;
}

/** The content of /var/lib/spectune/<unit>/lock (one JSON object). Times are the HOST's clock, in epoch ms. */
export interface LockRecord {
  /** Random id of this holding: release and heartbeat touch the lock only while it still carries it. */
  token: string;
  owner: LockOwner;
  /** The command holding it (tune, apply, rollback). */
  command: string;
  unit: string;
  startedAt: number;
  heartbeatAt: number;
  /** A holder that has not refreshed heartbeatAt for this long is presumed dead. */
  leaseMs: number;
}

/** The lease a holder promises to keep refreshing (it refreshes every quarter of it). */
export const DEFAULT_LEASE_MS = 120_000;

/** What the checker knows about the world, to judge a lock it found. */
export interface LockWorld {
  /** The host's clock now (epoch ms). */
  hostNow: number;
  /** This machine's name (a lock taken here can be checked by pid). */
  machine: string;
  /** Whether a pid runs on this machine. */
  isPidAlive(pid: number): boolean;
}

/** The verdict on a found lock: stale locks can be broken with --break-lock; live ones cannot. */
export interface LockJudgement {
  stale: boolean;
  why: string;
  /** Proven dead: its owner ran on this very machine and that pid is gone (not merely a late heartbeat). */
  ownerGoneHere: boolean;
}

// Serialize a record (one line, newline-terminated).
export function renderLockRecord(r: LockRecord): string {
  return `${JSON.stringify(r)}\n`;
}

// Parse a lock file; null when it is not a record spectune wrote (treated as stale: nobody can refresh it).
export function parseLockRecord(text: string): LockRecord | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (!v || typeof v !== 'object') return null;
  const r = v as Partial<LockRecord>;
  const o = r.owner as Partial<LockOwner> | undefined;
  const num = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
  if (typeof r.token !== 'string' || !o || typeof o.user !== 'string' || typeof o.machine !== 'string' || !num(o.pid))
    return null;
  if (
    typeof r.command !== 'string' ||
    typeof r.unit !== 'string' ||
    !num(r.startedAt) ||
    !num(r.heartbeatAt) ||
    !num(r.leaseMs)
  )
    return null;
  return {
    token: r.token,
    owner: { user: o.user, machine: o.machine, pid: o.pid },
    command: r.command,
    unit: r.unit,
    startedAt: r.startedAt,
    heartbeatAt: r.heartbeatAt,
    leaseMs: r.leaseMs,
  };
}

// Stale when its owner ran on this machine and that pid is gone, or when its heartbeat is older than its lease.
export function judgeLock(r: LockRecord | null, w: LockWorld): LockJudgement {
  if (!r) return { stale: true, why: 'the lock file is not a spectune lock record', ownerGoneHere: false };
  if (r.owner.machine === w.machine && !w.isPidAlive(r.owner.pid))
    return { stale: true, why: `pid ${r.owner.pid} is not running on ${w.machine}`, ownerGoneHere: true };
  const age = w.hostNow - r.heartbeatAt;
  if (age > r.leaseMs)
    return {
      stale: true,
      why: `no heartbeat for ${formatAge(age)} (lease ${formatAge(r.leaseMs)})`,
      ownerGoneHere: false,
    };
  return { stale: false, why: `heartbeat ${formatAge(Math.max(0, age))} ago`, ownerGoneHere: false };
}

// "root@box pid 123 (tune) since 2026-12-01T18:00:00Z", for messages.
export function describeHolder(r: LockRecord): string {
  return `${r.owner.user}@${r.owner.machine} pid ${r.owner.pid} (spectune ${r.command}) since ${new Date(r.startedAt).toISOString().replace(/\.\d{3}Z$/, 'Z')}`;
}

// A duration for messages: "42 s", "3.5 min", "2.0 h".
export function formatAge(ms: number): string {
  if (ms < 120_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 7_200_000) return `${(ms / 60_000).toFixed(1)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}
