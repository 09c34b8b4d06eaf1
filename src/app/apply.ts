// `spectune apply`: deploy one config through the drop-in, restart safely, wait for readiness failing fast,
// and roll back to the last known-good config when the candidate fails.
import type { Diagnosis, Verdict } from '../diagnose/types.js';
import type { EngineSettings } from '../engines/types.js';
import { isToolError, type ToolError } from '../errors.js';
import type { EventSink } from '../events.js';
import type { Changes, DeployPlan, RollbackResult } from '../service/index.js';
import { openService, type OpenService, type ServiceTarget } from './service-target.js';
import { withUnitLocks } from './unit-lock.js';

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
  onEvent: EventSink;
}

// Plan, and unless dry-run, deploy and verify; returns the plan alone for a dry run.
export async function applyConfig(req: ApplyRequest): Promise<ApplyOutcome | { dryRun: true; plan: DeployPlan }> {
  const svc = await openService(req.target, req.onEvent, { dryRun: req.dryRun });
  try {
    const ctl = svc.controller;
    const planOpts = req.timeoutStopSec === undefined ? {} : { timeoutStopSec: req.timeoutStopSec };
    // Plan first, read-only: a missing unit or a bad value is refused before anything (the lock included) is written.
    const plan = await ctl.plan(req.changes, planOpts);
    if (req.dryRun) return { dryRun: true, plan };
    return await withUnitLocks([{ host: svc.host, unit: ctl.unit }], { command: 'apply', breakLock: req.breakLock, onEvent: req.onEvent }, () => deployChecked(req, ctl, planOpts));
  } finally {
    await svc.close();
  }
}

// Under the lock: plan again (another operator may have changed the unit), deploy, wait ready; roll back a failed candidate unless told not to.
async function deployChecked(req: ApplyRequest, ctl: OpenService['controller'], planOpts: { timeoutStopSec?: number }): Promise<ApplyOutcome> {
  const plan = await ctl.plan(req.changes, planOpts);
  await ctl.apply(plan);
  const r = await ctl.waitReady({ timeoutMs: req.readyTimeoutMs });
  if (r.status === 'ready') {
    await ctl.markGood();
    return { json: { status: 'ready', config: plan.config, verdict: null, timeToVerdictMs: null }, plan, diagnosis: null, rollback: null, rollbackError: null, startError: null };
  }
  const error = r.error ? { error: { code: r.error.code, message: r.error.message, hint: r.error.hint ?? null } } : {};
  const failed: ApplyOutcome = {
    json: { status: 'failed', config: plan.config, verdict: r.verdict, timeToVerdictMs: r.timeToVerdictMs, ...error },
    plan, diagnosis: r.diagnosis, rollback: null, rollbackError: null, startError: r.error ?? null,
  };
  if (!req.rollback) return failed;
  try {
    const rb = await ctl.rollback({ readyTimeoutMs: req.readyTimeoutMs });
    return { ...failed, json: { ...failed.json, status: 'rolled_back' }, rollback: rb };
  } catch (e) {
    if (!isToolError(e)) throw e;
    return { ...failed, rollbackError: e };
  }
}
