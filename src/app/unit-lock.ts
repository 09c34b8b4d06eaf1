// The host lock around commands that change a unit (tune, apply, rollback): one holder per unit, across machines.
import type { EventSink } from '../tune/events.js';
import type { Host } from '../host/types.js';
import { acquireUnitLocks } from '../lock/index.js';

/** How a command takes its locks. */
export interface LockOptions {
  command: 'tune' | 'apply' | 'rollback';
  /** --break-lock: break a stale lock in the way (printed). */
  breakLock?: boolean;
  /** tune --resume: break the lock of this machine's own killed `spectune tune` (printed). */
  resume?: boolean;
  onEvent: EventSink;
  /** The units' controllers: each holds its commit-confirmed lease while the lock is held (see holdLease). */
  leases?: { holdLease(): Promise<void>; endLease(): Promise<void> }[];
}

// Lock every unit the command changes (rank0 first), hold their leases, run `work`, and release on every exit path.
export async function withUnitLocks<T>(
  units: { host: Host; unit: string }[],
  opts: LockOptions,
  work: () => Promise<T>,
): Promise<T> {
  const locks = await acquireUnitLocks(
    units.map((u) => ({
      host: u.host,
      unit: u.unit,
      command: opts.command,
      breakLock: opts.breakLock,
      resumeOwn: opts.resume,
      onEvent: opts.onEvent,
    })),
  );
  const leases = opts.leases ?? [];
  try {
    for (const l of leases) await l.holdLease();
    return await work();
  } finally {
    await locks.release();
    // After the lock: a kill in between leaves a lease whose expiry finds no lock of ours (harmless), never a lock
    // with no lease to remove it.
    for (const l of leases)
      await l.endLease().catch(() => {
        /* unreachable host: the lease lapses on its own */
      });
  }
}
