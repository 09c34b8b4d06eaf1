// `spectune apply`: deploy one config through the drop-in, restart safely, wait for readiness failing fast,
// and roll back to the last known-good config when the candidate fails.
import type { Diagnosis, Verdict } from '../diagnose/index.js';
import type { EngineSettings } from '../engines/types.js';
import { isToolError, ToolError } from '../errors.js';
import type { EventSink } from '../tune/events.js';
import type {
  Changes,
  DeployPlan,
  FailedStart,
  RollbackResult,
  ServiceController,
  ServiceGroup,
} from '../service/index.js';
import { openService, type ServiceTarget } from './service-target.js';
import { withUnitLocks } from './unit-lock.js';
import { preflightService } from './local-preflight.js';

/** The --json shape of apply and rollback (issue 4). */
export interface ServiceJson {
  status: 'ready' | 'failed' | 'rolled_back';
  config: EngineSettings;
  verdict: Verdict | null;
  timeToVerdictMs: number | null;
  /** Only when the start missed its start-up deadline (E_TIMEOUT). */
  error?: { code: string; message: string; hint: string | null };
}

/** What an apply did, for rendering. */
export interface ApplyOutcome {
  json: ServiceJson;
  plan: DeployPlan;
  diagnosis: Diagnosis | null;
  rollback: RollbackResult | null;
  /** Set when the rollback failed too (E_ROLLBACK_FAILED). */
  rollbackError: ToolError | null;
  /** Set when the candidate's start missed its start-up deadline (E_TIMEOUT, naming what was seen last). */
  startError: ToolError | null;
}

/** An apply request. */
export interface ApplyRequest {
  target: ServiceTarget;
  changes: Changes;
  dryRun: boolean;
  /** Roll back automatically when the candidate fails (default on). */
  rollback: boolean;
  timeoutStopSec?: number;
  /** Start-up deadline (ms) of the candidate and of the rollback; default the controller's (20 min). */
  readyTimeoutMs?: number;
  /** Break a stale host lock in the way (printed). */
  breakLock?: boolean;
  /** --lease: the commit-confirmed lease of the candidate (ms; 0 = off); default the config's, else 5 min. */
  leaseMs?: number;
  /** --drain-timeout: how long the restart waits for in-flight requests (ms); default the config's, else 10 min. */
  drainTimeoutMs?: number;
  onEvent: EventSink;
}

/** One rank's plan, for the dry run of a group. */
export interface RankPlan {
  rank: number;
  host: string;
  plan: DeployPlan;
}

// Plan, and unless dry-run, deploy and verify; returns the plans alone for a dry run. A multi-host target deploys to
// every rank as one group (one verdict over all journals, every rank rolled back); --rank N, one rank.
export async function applyConfig(
  req: ApplyRequest,
): Promise<ApplyOutcome | { dryRun: true; plan: DeployPlan; plans: RankPlan[] }> {
  // The action log and the ssh control directory are checked before any host is touched.
  preflightService(req.target, { dryRun: req.dryRun, actionLog: true });
  const svc = await openService(req.target, req.onEvent, {
    dryRun: req.dryRun,
    readyTimeoutMs: req.readyTimeoutMs,
    leaseMs: req.leaseMs,
    drainTimeoutMs: req.drainTimeoutMs,
    checkEndpointPort: true,
    command: 'apply',
  });
  try {
    const p = req.timeoutStopSec === undefined ? {} : { timeoutStopSec: req.timeoutStopSec };
    // Plan first, read-only: a missing unit or a bad value is refused before anything (the lock included) is written.
    const all = await svc.group.plan(req.changes, p);
    const plans = all.map((plan, i) => ({ rank: req.target.ranks[i].rank, host: svc.group.ranks[i].host.name, plan }));
    if (req.dryRun) return { dryRun: true, plan: all[0], plans };
    const units = svc.group.ranks.map((c) => ({ host: c.host, unit: c.unit }));
    return await withUnitLocks(
      units,
      { command: 'apply', breakLock: req.breakLock, onEvent: req.onEvent, leases: svc.group.ranks },
      async () => {
        // Under the lock: plan again (another operator may have changed the unit since).
        const fresh = await svc.group.plan(req.changes, p);
        return svc.group.ranks.length > 1
          ? await applyToGroup(svc.group, fresh, req)
          : await applyToUnit(svc.controller, fresh[0], req, req.target.ranks[0].rank > 0);
      },
    );
  } finally {
    await svc.close();
  }
}

// The outcome of a failed start, before any rollback.
function failedOutcome(plan: DeployPlan, r: FailedStart, verdict: Verdict): ApplyOutcome {
  const error = r.error ? { error: { code: r.error.code, message: r.error.message, hint: r.error.hint ?? null } } : {};
  return {
    json: { status: 'failed', config: plan.config, verdict, timeToVerdictMs: r.timeToVerdictMs, ...error },
    plan,
    diagnosis: r.diagnosis,
    rollback: null,
    rollbackError: null,
    startError: r.error ?? null,
  };
}

// Roll back after a failed start (unless --no-rollback); a failed rollback is kept, not thrown.
async function withRollback(
  failed: ApplyOutcome,
  req: ApplyRequest,
  rollback: () => Promise<RollbackResult>,
): Promise<ApplyOutcome> {
  if (!req.rollback) return failed;
  try {
    const rb = await rollback();
    return { ...failed, json: { ...failed.json, status: 'rolled_back' }, rollback: rb };
  } catch (e) {
    if (!isToolError(e)) throw e;
    return { ...failed, rollbackError: e };
  }
}

// The outcome of a ready start.
function readyOutcome(plan: DeployPlan): ApplyOutcome {
  return {
    json: { status: 'ready', config: plan.config, verdict: null, timeToVerdictMs: null },
    plan,
    diagnosis: null,
    rollback: null,
    rollbackError: null,
    startError: null,
  };
}

// spectune's own local I/O failed after the candidate was deployed (the action log became unwritable: EACCES,
// ENOSPC, EROFS): roll back to known-good before the one E_LOCAL_STATE line, which says whether that worked.
async function rollBackOnLocalFailure<T>(
  work: () => Promise<T>,
  rollback: () => Promise<unknown>,
  what: string,
): Promise<T> {
  try {
    return await work();
  } catch (e) {
    if (!isToolError(e) || e.code !== 'E_LOCAL_STATE' || /before any restart/.test(e.message)) throw e;
    const back = await rollback().then(
      () => `${what} was rolled back to known-good`,
      (r: unknown) => `the rollback of ${what} failed too (${(r as Error).message}): run spectune rollback`,
    );
    throw new ToolError('E_LOCAL_STATE', `${e.message}; ${back}`, { hint: e.hint, cause: e });
  }
}

// One unit: deploy, wait ready (a worker rank: running through the watch window), roll back on failure.
async function applyToUnit(
  ctl: ServiceController,
  plan: DeployPlan,
  req: ApplyRequest,
  worker: boolean,
): Promise<ApplyOutcome> {
  await ctl.apply(plan);
  return rollBackOnLocalFailure(
    async () => {
      const r = worker ? await ctl.waitRunning() : await ctl.waitReady({ timeoutMs: req.readyTimeoutMs });
      if (r.status === 'ready') {
        await ctl.markGood();
        return readyOutcome(plan);
      }
      return withRollback(failedOutcome(plan, r, r.verdict), req, () =>
        ctl.rollback({ readyTimeoutMs: req.readyTimeoutMs, worker }),
      );
    },
    () => ctl.rollback({ readyTimeoutMs: req.readyTimeoutMs, worker }),
    `${ctl.host.name} ${ctl.unit}`,
  );
}

// Every rank: deploy, restart in rank order, ready with rank0, one verdict over all journals, roll every rank back.
async function applyToGroup(group: ServiceGroup, plans: DeployPlan[], req: ApplyRequest): Promise<ApplyOutcome> {
  const rollback = () =>
    group.rollback({ readyTimeoutMs: req.readyTimeoutMs, why: 'stop the failed apply before rolling every rank back' });
  return rollBackOnLocalFailure(
    async () => {
      const out = await group.deploy(plans, `apply ${JSON.stringify(plans[0].changes)}`);
      if (out.status === 'ready') {
        await group.markGood();
        return readyOutcome(plans[0]);
      }
      const failed = failedOutcome(plans[0], out.failed, out.verdict);
      return withRollback(failed, req, async () => ({ status: 'rolled_back', ...(await rollback()) }));
    },
    rollback,
    'every rank',
  );
}
