// Performs one trial's phases (feasibility → deploy → ready → warm-up → bench → record), emitting events.
import type { EventSink } from '../tune/events.js';
import type { TrialPhase } from '../tune/events.js';
import { checkConstraints, evaluateObjective } from '../tune/objective.js';
import { trialNumber, type TrialKind, type TrialRecord, type TuneConfig } from '../tune/types.js';
import { isLostHost } from '../service/index.js';
import type { TuneDeps, TuneSpec } from './tune-ports.js';

/** Rolling back after a failure costs one more restart of the service. */
const ROLLBACK_RESTARTS = 1;

/** Context shared by every trial of a campaign. */
export interface TrialContext {
  deps: TuneDeps;
  spec: TuneSpec;
  campaignId: number;
  onEvent: EventSink;
  signal?: AbortSignal;
  /** The baseline's runs, for relative constraints. */
  baselineRuns: TrialRecord['runs'] | null;
  /** Durations of earlier phases, for "elapsed vs expected". */
  phaseMs: Map<TrialPhase, number>;
  /** Trials (kind, config, reason) already redone once because their benchmark failed while the service stayed up. */
  redoneOnce?: Set<string>;
}

// A fresh in-flight record for a trial.
export function createTrialRecord(
  index: number,
  kind: TrialKind,
  config: TuneConfig,
  reason: string,
  now: number,
): TrialRecord {
  return {
    index,
    kind,
    config,
    status: 'running',
    reason,
    objective: null,
    constraintsOk: null,
    violations: [],
    runs: [],
    verdict: null,
    prediction: null,
    capacity: null,
    restarts: 0,
    startedAt: now,
    endedAt: null,
  };
}

// Announce a phase with its expected duration (from the last time it ran), and time it; `index` is the trial's
// 0-based index (the event carries its 1-based number).
export async function runPhase<T>(
  ctx: TrialContext,
  index: number,
  phase: TrialPhase,
  work: () => Promise<T>,
): Promise<T> {
  const t0 = ctx.deps.now();
  ctx.onEvent({
    type: 'trial:phase',
    ts: t0,
    trial: trialNumber(index),
    phase,
    expectedMs: ctx.phaseMs.get(phase) ?? null,
  });
  const out = await work();
  ctx.phaseMs.set(phase, ctx.deps.now() - t0);
  return out;
}

// Warm up, benchmark, and score a ready service; returns the finished record.
export async function measureTrial(ctx: TrialContext, rec: TrialRecord): Promise<TrialRecord> {
  const { deps, spec, onEvent, signal } = ctx;
  await runPhase(ctx, rec.index, 'warmup', () => deps.bench.run('warmup', onEvent, signal));
  signal?.throwIfAborted();
  const phase = rec.kind === 'soak' ? 'soak' : 'bench';
  const { runs, samples } = await runPhase(ctx, rec.index, phase, () => deps.bench.run(phase, onEvent, signal));
  signal?.throwIfAborted();
  deps.store.saveSamples(ctx.campaignId, rec.index, samples);
  const violations = checkConstraints(runs, spec.constraints, rec.kind === 'baseline' ? runs : ctx.baselineRuns);
  const objective = evaluateObjective(runs, spec.objective);
  const failedRequests = runs.reduce((s, r) => s + r.requests.failed, 0);
  if (failedRequests > 0) violations.push(`${failedRequests} benchmark request(s) failed`);
  if (objective === null) violations.push('objective not measured');
  return { ...rec, runs, objective, violations, constraintsOk: violations.length === 0, status: 'ok' };
}

// Record a failed deploy: the verdict is kept, the crash loop stopped and the last good config restored.
async function recordFailure(ctx: TrialContext, rec: TrialRecord, reason: string): Promise<TrialRecord> {
  await runPhase(ctx, rec.index, 'rollback', () =>
    ctx.deps.service.recover(`trial ${trialNumber(rec.index)} failed: ${reason}`),
  );
  return { ...rec, status: 'failed', violations: [reason], restarts: rec.restarts + ROLLBACK_RESTARTS };
}

// Compare the prediction with what happened, so a wrong prediction is said out loud.
function notePrediction(ctx: TrialContext, rec: TrialRecord, failedOom: boolean): void {
  if (!rec.prediction) return;
  const right = rec.prediction.feasible !== failedOom;
  const level = right ? 'info' : 'warn';
  const said = rec.prediction.feasible ? 'fits' : 'does not fit';
  ctx.onEvent({
    type: 'log',
    ts: ctx.deps.now(),
    level,
    message: `memory prediction (${said}) was ${right ? 'right' : 'WRONG'} for trial ${trialNumber(rec.index)}`,
  });
}

// Whether a verdict says the config ran out of memory at start-up.
export function isMemoryVerdict(v: TrialRecord['verdict']): boolean {
  const oom = new Set(['kv_cache_oom', 'cuda_oom', 'cuda_graph_capture_failure', 'host_oom_kill']);
  return v !== null && (oom.has(v.class) || (v.cause !== null && oom.has(v.cause)));
}

// Deploy a candidate and measure it; a failed start is diagnosed and rolled back (expected outcome, not an error).
export async function deployAndMeasure(ctx: TrialContext, rec: TrialRecord): Promise<TrialRecord> {
  const why = `${rec.kind} trial ${trialNumber(rec.index)}: ${rec.reason}`;
  const out = await runPhase(ctx, rec.index, 'deploy', () => ctx.deps.service.deploy(rec.config, why, ctx.signal));
  const withRestarts = { ...rec, restarts: out.restarts };
  if (!out.ready) {
    const failed = { ...withRestarts, verdict: out.verdict };
    notePrediction(ctx, failed, isMemoryVerdict(out.verdict));
    return recordFailure(ctx, failed, out.reason);
  }
  notePrediction(ctx, withRestarts, false);
  const ready = { ...withRestarts, capacity: out.capacity };
  try {
    const measured = await measureTrial(ctx, ready);
    const failed = measured.runs.reduce((s, r) => s + r.requests.failed, 0);
    if (failed > 0 && (await engineDied(ctx))) return recordDeath(ctx, ready, `${failed} benchmark request(s) failed`);
    if (
      measured.objective === null &&
      failed > 0 &&
      (await isNotTheConfigsFault(ctx, ready, `no request measured (${measured.violations.join('; ')})`))
    ) {
      return { ...measured, status: 'discarded' };
    }
    await ctx.deps.service.markGood();
    return measured;
  } catch (e) {
    // Ctrl-C, or a store that cannot save (full disk): not the config's fault; the campaign stops and resumes it.
    // A lost host or a lapsed lease (the group retried and rolled back already) is no verdict on the config either.
    const code = (e as { code?: string }).code;
    if (
      ctx.signal?.aborted ||
      code === 'E_STORE_FULL' ||
      code === 'E_LOCAL_STATE' ||
      code === 'E_LEASE_LAPSED' ||
      isLostHost(e)
    )
      throw e;
    const reason = `benchmark failed: ${(e as Error).message}`;
    if (await engineDied(ctx)) return recordDeath(ctx, ready, reason);
    if (await isNotTheConfigsFault(ctx, ready, reason)) return { ...ready, status: 'discarded', violations: [reason] };
    return recordFailure(ctx, ready, reason);
  }
}

// Whether the engine deployed for this trial is gone (died, killed, restarted by systemd) after its benchmark failed;
// false when the port cannot tell.
async function engineDied(ctx: TrialContext): Promise<boolean> {
  const s = ctx.deps.service;
  return Boolean(s.stayedUp && s.diagnoseDeath) && !(await s.stayedUp!());
}

// The engine died under the benchmark: a failed trial like a failed start, with the journal's verdict on that
// lifetime (a kill, an OOM, a CUDA error), rolled back; never a constraint violation of a measured config.
async function recordDeath(ctx: TrialContext, rec: TrialRecord, what: string): Promise<TrialRecord> {
  const verdict = await ctx.deps.service.diagnoseDeath!();
  if (verdict) ctx.onEvent({ type: 'diagnosis', ts: ctx.deps.now(), verdict });
  const reason = `the engine died during the benchmark (${verdict ? (verdict.cause ? `${verdict.class}, cause ${verdict.cause}` : verdict.class) : 'no verdict: journal not read'}): ${what}`;
  return recordFailure(ctx, { ...rec, verdict, runs: [], objective: null }, reason);
}

// A benchmark that failed while the service stayed up (same process, active, healthy) says nothing about the config:
// the first such failure of a trial makes it skipped and redone (said in a warning naming `what` happened); a
// second one counts against the config.
async function isNotTheConfigsFault(ctx: TrialContext, rec: TrialRecord, what: string): Promise<boolean> {
  const key = `${rec.kind} ${JSON.stringify(rec.config)} ${rec.reason}`;
  ctx.redoneOnce ??= new Set();
  if (!ctx.deps.service.stayedUp || ctx.redoneOnce.has(key)) return false;
  if (!(await ctx.deps.service.stayedUp())) return false;
  ctx.redoneOnce.add(key);
  const message = `trial ${trialNumber(rec.index)}: ${what}; but the service stayed up and healthy (same process), so it was not the config's fault (a network cut?): the trial is skipped and redone once`;
  ctx.onEvent({ type: 'log', ts: ctx.deps.now(), level: 'warn', message });
  return true;
}
