// The per-unit host lock: the public surface of src/lock (two operators never change one unit at once).
export {
  acquireUnitLock,
  acquireUnitLocks,
  currentOwner,
  isPidAlive,
  lockPath,
  type HeldLock,
  type LockRequest,
} from './host-lock.js';
export {
  DEFAULT_LEASE_MS,
  describeHolder,
  judgeLock,
  parseLockRecord,
  renderLockRecord,
  type LockOwner,
  type LockRecord,
  type LockJudgement,
} from './record.js';
