// `spectune rollback`: return to the last known-good drop-in (or none, or --to VERSION), restart, verify readiness; a plan only
// under --dry-run; nothing at all (no restart) when spectune never deployed to the unit.
import type { EventSink } from '../tune/events.js';
import type { RollbackPlan } from '../service/index.js';
import type { Version } from '../service/deploy.js';
import type { ServiceJson } from './apply.js';
import { openService, type ServiceTarget } from './service-target.js';
import { withUnitLocks } from './unit-lock.js';
import { preflightService } from './local-preflight.js';

/** One rank's rollback plan. */
export interface RankRollbackPlan {
  rank: number;
  host: string;
  plan: RollbackPlan;
}

/** What a rollback did: rolled back (and ready), or nothing (with why), or only planned (dry run); plans: one per rank. */
export type RollbackOutcome =
  | (ServiceJson & { version: string | number })
  | { status: 'nothing'; reason: string; plan: RollbackPlan; plans: RankRollbackPlan[] }
  | { status: 'dry-run'; plan: RollbackPlan; plans: RankRollbackPlan[] };

// Roll back and report the config now in force; throws E_ROLLBACK_FAILED when even that start fails (or misses
// its start-up deadline, readyTimeoutMs, default the controller's). A dry run and a no-op change nothing (not even the
// lock). A multi-host target rolls every rank back as one group (nothing to do only when no rank has anything to do).
export async function rollbackService(
  target: ServiceTarget,
  onEvent: EventSink,
  opts: { readyTimeoutMs?: number; dryRun?: boolean; to?: Version; breakLock?: boolean } = {},
): Promise<RollbackOutcome> {
  // The action log and the ssh control directory are checked before any host is touched.
  preflightService(target, { dryRun: opts.dryRun === true, actionLog: true });
  const svc = await openService(target, onEvent, {
    dryRun: opts.dryRun,
    readyTimeoutMs: opts.readyTimeoutMs,
    checkEndpointPort: true,
    command: 'rollback',
  });
  // Every rank's plan; 'nothing' only when no rank has anything to do.
  const planAll = async () => {
    const all = await svc.group.planRollback(opts.to);
    const plans = all.map((plan, i) => ({ rank: target.ranks[i].rank, host: svc.group.ranks[i].host.name, plan }));
    const plan = all[0];
    if (all.every((p) => p.nothing !== null)) {
      const reason =
        all.length === 1 ? plan.nothing! : plans.map((p) => `rank${p.rank} ${p.host}: ${p.plan.nothing}`).join('\n');
      return { status: 'nothing' as const, reason, plan, plans };
    }
    return { status: 'plan' as const, plan, plans };
  };
  try {
    // Plan first, read-only: nothing to do (or a dry run) writes nothing.
    const first = await planAll();
    if (first.status === 'nothing') return first;
    if (opts.dryRun) return { status: 'dry-run', plan: first.plan, plans: first.plans };
    const units = svc.group.ranks.map((c) => ({ host: c.host, unit: c.unit }));
    return await withUnitLocks(
      units,
      { command: 'rollback', breakLock: opts.breakLock, onEvent, leases: svc.group.ranks },
      async () => {
        // Under the lock: plan again (another operator may have acted since).
        const again = await planAll();
        if (again.status === 'nothing') return again;
        const version =
          svc.group.ranks.length > 1
            ? (
                await svc.group.rollback({
                  readyTimeoutMs: opts.readyTimeoutMs,
                  to: opts.to,
                  why: 'stop every rank before rolling back',
                })
              ).version
            : (
                await svc.controller.rollback({
                  readyTimeoutMs: opts.readyTimeoutMs,
                  to: again.plan.version,
                  worker: target.ranks[0].rank > 0,
                })
              ).version;
        // What it returned to is now the known-good version (a later rollback must not bring back what --to left).
        await svc.group.markGood();
        const config = await svc.controller.currentSettings();
        return { status: 'rolled_back', config, verdict: null, timeToVerdictMs: null, version };
      },
    );
  } finally {
    await svc.close();
  }
}
