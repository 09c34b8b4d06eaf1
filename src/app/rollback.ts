// `spectune rollback`: return to the last known-good drop-in (or none, or --to VERSION), restart, verify readiness; a plan only
// under --dry-run; nothing at all (no restart) when spectune never deployed to the unit.
import type { EventSink } from '../events.js';
import type { RollbackPlan } from '../service/index.js';
import type { Version } from '../service/deploy.js';
import type { ServiceJson } from './apply.js';
import { openService, type ServiceTarget } from './service-target.js';
import { withUnitLocks } from './unit-lock.js';

/** What a rollback did: rolled back (and ready), or nothing (with why), or only planned (dry run). */
export type RollbackOutcome =
  | (ServiceJson & { version: string | number })
  | { status: 'nothing'; reason: string; plan: RollbackPlan }
  | { status: 'dry-run'; plan: RollbackPlan };

// Roll back and report the config now in force; throws E_ROLLBACK_FAILED when even that start fails (or misses
// its start-up deadline, readyTimeoutMs, default the controller's). A dry run and a no-op change nothing.
export async function rollbackService(target: ServiceTarget, onEvent: EventSink, opts: { readyTimeoutMs?: number; dryRun?: boolean; to?: Version; breakLock?: boolean } = {}): Promise<RollbackOutcome> {
  const svc = await openService(target, onEvent, { dryRun: opts.dryRun });
  try {
    // Plan first, read-only: nothing to do (or a dry run) writes nothing, not even the lock.
    const first = await svc.controller.planRollback(opts.to);
    if (first.nothing !== null) return { status: 'nothing', reason: first.nothing, plan: first };
    if (opts.dryRun) return { status: 'dry-run', plan: first };
    return await withUnitLocks([{ host: svc.host, unit: svc.controller.unit }], { command: 'rollback', breakLock: opts.breakLock, onEvent }, async () => {
      const plan = await svc.controller.planRollback(opts.to);
      if (plan.nothing !== null) return { status: 'nothing', reason: plan.nothing, plan };
      const r = await svc.controller.rollback({ readyTimeoutMs: opts.readyTimeoutMs, to: plan.version });
      // What it returned to is now the known-good version (a later rollback must not bring back what --to left).
      await svc.controller.markGood();
      const config = await svc.controller.currentSettings();
      return { status: 'rolled_back', config, verdict: null, timeToVerdictMs: null, version: r.version };
    });
  } finally {
    await svc.close();
  }
}
