// `spectune tune` use case: the campaign loop — baseline, search, soak, end state — durable and resumable.
import type { EventSink, SpectuneEvent, TrialPhase } from '../tune/events.js';
import { ToolError } from '../errors.js';
import { findBest, configKey } from '../tune/best.js';
import { findBestPerConcurrency } from '../tune/per-concurrency.js';
import { decideNextStep, findDisqualified, reconcileTrials } from '../tune/step.js';
import { metricUnit } from '../tune/objective.js';
import { trialNumber, type NextStep, type TrialRecord, type TuneConfig } from '../tune/types.js';
import { createTrialRecord, deployAndMeasure, measureTrial, runPhase, type TrialContext } from './trial.js';
import type { TuneDeps, TuneSpec } from './tune-ports.js';
import { finishCampaign, findConfigInForce, type CampaignResult } from './tune-finish.js';

export type { CampaignResult } from './tune-finish.js';

/** Milliseconds in a minute, for the resume message. */
const MS_PER_MINUTE = 60_000;

/** Options of one run of the campaign. */
export interface CampaignOptions {
  resume: boolean;
  /** End on the original config instead of the winner. */
  restore: boolean;
}

/** Mutable state of the running campaign (kept in one place; persisted trial by trial). */
interface RunState {
  ctx: TrialContext;
  trials: TrialRecord[];
  /** Time the tuner ran on this campaign before this run (interruptions excluded). */
  activeBeforeMs: number;
  /** When this run started. */
  runStartedAt: number;
}

// Time the tuner has been running on the campaign, for the hours budget; also records that it is alive now.
function markActive(st: RunState): number {
  const now = st.ctx.deps.now();
  st.ctx.deps.store.markActive(st.ctx.campaignId, now);
  return st.activeBeforeMs + (now - st.runStartedAt);
}

// The verdict progress shows for a finished trial: the report's (a measured trial that broke a constraint "violates").
function endStatus(t: TrialRecord): Extract<SpectuneEvent, { type: 'trial:end' }>['status'] {
  if (t.status === 'running' || t.status === 'discarded') return 'skipped';
  if (t.status === 'ok' && t.constraintsOk === false) return 'violates';
  return t.status;
}

// Save and announce a trial's end, and a new best when it is one.
function endTrial(st: RunState, rec: TrialRecord): void {
  const { deps, onEvent, campaignId, spec } = st.ctx;
  const done = { ...rec, endedAt: deps.now() };
  const rule = { goal: spec.objective.goal, noiseMargin: spec.noiseMargin };
  const before = findBest(st.trials, rule);
  st.trials = [...st.trials.filter((t) => t.index !== rec.index), done];
  deps.store.saveTrial(campaignId, done);
  onEvent({
    type: 'trial:end',
    ts: deps.now(),
    trial: trialNumber(done.index),
    status: endStatus(done),
    objective: done.objective,
    verdict: done.verdict,
    violations: done.violations,
    unit: metricUnit(st.ctx.spec.objective.metric),
  });
  const after = findBest(st.trials, rule, findDisqualified(st.trials, spec.objective.goal));
  if (after && (!before || after.key !== before.key || after.objective !== before.objective)) {
    const trial = trialNumber(after.trials[after.trials.length - 1].index);
    onEvent({
      type: 'campaign:best',
      ts: deps.now(),
      trial,
      config: after.config,
      objective: after.objective,
      unit: metricUnit(st.ctx.spec.objective.metric),
    });
  }
}

// Start a trial: persist it as running first, so an interruption is visible on resume.
function startTrial(st: RunState, kind: TrialRecord['kind'], config: TuneConfig, reason: string): TrialRecord {
  const { deps, campaignId, onEvent } = st.ctx;
  const index = st.trials.reduce((m, t) => Math.max(m, t.index + 1), 0);
  const rec = createTrialRecord(index, kind, config, reason, deps.now());
  st.trials = [...st.trials, rec];
  deps.store.saveTrial(campaignId, rec);
  onEvent({ type: 'trial:start', ts: rec.startedAt, campaignId, trial: trialNumber(index), config, reason });
  return rec;
}

// Measure the config in force as the baseline; if it is not healthy there is nothing to tune from.
async function runBaseline(st: RunState): Promise<TrialRecord> {
  const { deps, spec, signal } = st.ctx;
  const config = await deps.service.readConfig(spec.keys);
  const rec = startTrial(st, 'baseline', config, 'baseline: the config in force');
  const health = await runPhase(st.ctx, rec.index, 'wait-ready', () => deps.service.waitHealthy(signal));
  if (!health.healthy) {
    throw new ToolError('E_SERVICE_FAILED', `the service is not healthy before tuning: ${health.reason}`, {
      hint: 'fix the service first (spectune status / spectune diagnose), then run spectune tune again',
    });
  }
  const measured = await measureTrial(st.ctx, { ...rec, capacity: health.capacity });
  await deps.service.markGood();
  return measured;
}

// Whether the next refusal should be deployed once to confirm it (only the first refusal of the campaign).
function wantsConfirmation(st: RunState): boolean {
  const confirmed = st.trials.some(
    (t) => t.prediction && !t.prediction.feasible && (t.status === 'ok' || t.status === 'failed'),
  );
  return st.ctx.spec.confirmFirstRefusal === true && !confirmed;
}

// A search trial: ask the memory predictor first, so an infeasible config costs no restart.
async function runSearchTrial(st: RunState, step: Extract<NextStep, { kind: 'trial' }>): Promise<TrialRecord> {
  const rec = startTrial(st, 'search', step.config, step.reason);
  const prediction = await runPhase(st.ctx, rec.index, 'feasibility', async () =>
    st.ctx.deps.search.predict(
      st.trials.filter((t) => t.index !== rec.index),
      step.config,
    ),
  );
  const withPrediction = { ...rec, prediction };
  if (prediction && !prediction.feasible && !step.confirmProbe && !wantsConfirmation(st)) {
    const msg = `trial ${trialNumber(rec.index)}: predicted not to fit (${prediction.reason})${prediction.suggestion ? `; suggestion: ${prediction.suggestion}` : ''}`;
    st.ctx.onEvent({ type: 'log', ts: st.ctx.deps.now(), level: 'warn', message: msg });
    return { ...withPrediction, status: 'infeasible', violations: [prediction.reason] };
  }
  return deployAndMeasure(st.ctx, withPrediction);
}

// Re-run the best candidate as a stability soak before accepting it.
async function runSoak(st: RunState, step: Extract<NextStep, { kind: 'soak' }>): Promise<TrialRecord> {
  const rec = startTrial(st, 'soak', step.config, `soak of trial ${trialNumber(step.of)}`);
  return deployAndMeasure(st.ctx, rec);
}

// Perform one step; a finished trial is returned for recording.
async function performStep(st: RunState, step: Exclude<NextStep, { kind: 'finish' }>): Promise<TrialRecord> {
  if (step.kind === 'baseline') return runBaseline(st);
  if (step.kind === 'trial') return runSearchTrial(st, step);
  return runSoak(st, step);
}

// Run steps until the state machine says finish; an abort leaves the in-flight trial for resume to redo.
async function runSteps(st: RunState): Promise<Extract<NextStep, { kind: 'finish' }>> {
  const { deps, spec, signal } = st.ctx;
  for (;;) {
    signal?.throwIfAborted();
    const step = decideNextStep({
      trials: st.trials,
      budget: spec.budget,
      elapsedMs: markActive(st),
      objective: spec.objective,
      noiseMargin: spec.noiseMargin,
      propose: (h) => deps.search.propose(h),
    });
    if (step.kind === 'finish') return step;
    const rec = await performStep(st, step);
    if (rec.kind === 'baseline') st.ctx.baselineRuns = rec.runs;
    endTrial(st, rec);
  }
}

// Whether the tuned settings in force are those of the last trial that measured (the known-good one spectune marked).
async function isOnKnownGood(st: RunState): Promise<boolean> {
  const good = findConfigInForce(st.trials);
  return good !== null && configKey(await st.ctx.deps.service.readConfig(st.ctx.spec.keys)) === configKey(good);
}

// On resume: discard the interrupted trial and make sure the service is on a known-good config before going on.
async function reconcileService(st: RunState, interrupted: TrialRecord[]): Promise<void> {
  const { deps, onEvent } = st.ctx;
  for (const t of interrupted) {
    deps.store.saveTrial(st.ctx.campaignId, { ...t, status: 'discarded', endedAt: deps.now() });
    onEvent({
      type: 'log',
      ts: deps.now(),
      level: 'warn',
      message: `trial ${trialNumber(t.index)} (${JSON.stringify(t.config)}) skipped: spectune stopped during it; its result is discarded and it is redone`,
    });
  }
  // Already back on known-good (the lease restored it, or nothing was deployed): no restart; the next trial's deploy
  // is the one restart a resume costs.
  const onGood = interrupted.every((t) => t.kind === 'baseline') || (await isOnKnownGood(st));
  const health = onGood ? await deps.service.waitHealthy(st.ctx.signal) : null;
  if (health?.healthy) {
    onEvent({
      type: 'log',
      ts: deps.now(),
      level: 'info',
      message: 'resume: the service is healthy on its known-good config',
    });
    return;
  }
  await deps.service.recover(
    interrupted.length ? 'resume after an interrupted trial' : `resume: service not healthy (${health?.reason})`,
  );
  onEvent({
    type: 'log',
    ts: deps.now(),
    level: 'info',
    message: 'resume: the service is back on its known-good config (rolled back)',
  });
}

// Ctrl-C or kill during a trial: leave the service on a known-good config, keep the trial for resume.
async function handleAbort(st: RunState): Promise<void> {
  const inflight = st.trials.filter((t) => t.status === 'running');
  for (const t of inflight) {
    st.trials = st.trials.map((x) => (x.index === t.index ? { ...x, status: 'discarded' } : x));
    st.ctx.deps.store.saveTrial(st.ctx.campaignId, { ...t, status: 'discarded', endedAt: st.ctx.deps.now() });
  }
  markActive(st);
  if (inflight.some((t) => t.kind !== 'baseline')) await st.ctx.deps.service.recover('interrupted by the operator');
}

// The store cannot save (full disk), or spectune's own local I/O failed (E_LOCAL_STATE: EACCES, ENOSPC, EROFS on the
// store or the action log): put the service back on its known-good config when a trial's candidate was in flight; the
// unsaved trial stays "running" in the store and resume redoes it.
async function recoverAfterStoreFailure(st: RunState, e: ToolError): Promise<void> {
  if (!st.trials.some((t) => t.status === 'running' && t.kind !== 'baseline')) return;
  st.ctx.onEvent({
    type: 'log',
    ts: st.ctx.deps.now(),
    level: 'error',
    message: `${e.message}: returning the service to its known-good config`,
  });
  try {
    await st.ctx.deps.service.recover(
      e.code === 'E_STORE_FULL' ? 'the store cannot save (disk full)' : 'spectune cannot write its local state',
    );
  } catch (r) {
    st.ctx.onEvent({
      type: 'log',
      ts: st.ctx.deps.now(),
      level: 'error',
      message: `could not return the service to its known-good config: ${(r as Error).message}; run spectune rollback`,
    });
  }
}

// After Ctrl-C: the best so far by the search's own rule (the one the report then names), and how to go on.
function interruptedResult(st: RunState, campaignId: number, baseline: TrialRecord | null): CampaignResult {
  const { spec } = st.ctx;
  const w = findBest(
    st.trials,
    { goal: spec.objective.goal, noiseMargin: spec.noiseMargin },
    findDisqualified(st.trials, spec.objective.goal),
  );
  const best = w ? w.trials[w.trials.length - 1] : null;
  const cfg = best
    ? Object.entries(best.config)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')
    : null;
  const sofar =
    best && cfg
      ? `best so far: trial ${trialNumber(best.index)} ${cfg}: ${best.objective?.toFixed(1)}; `
      : 'no usable trial yet; ';
  return {
    campaignId,
    status: 'interrupted',
    best,
    baseline,
    trials: st.trials,
    deployed: null,
    restarts: st.trials.reduce((n, t) => n + t.restarts, 0),
    winnerNote: w?.why ?? null,
    bestPerConcurrency: findBestPerConcurrency(st.trials),
    summary: `${spec.simulated ? 'SIMULATED engine: ' : ''}interrupted; ${sofar}run with --resume to continue`,
  };
}

// Run (or resume) a campaign to its end state.
export async function runCampaign(
  deps: TuneDeps,
  spec: TuneSpec,
  opts: CampaignOptions,
  onEvent: EventSink,
  signal?: AbortSignal,
): Promise<CampaignResult> {
  const runStartedAt = deps.now();
  const stored = deps.store.openCampaign({ resume: opts.resume, name: spec.name, spec, now: runStartedAt });
  const { trials, interrupted } = reconcileTrials(stored.trials);
  const baseline = trials.find((t) => t.kind === 'baseline' && t.status === 'ok');
  const ctx: TrialContext = {
    deps,
    spec,
    campaignId: stored.id,
    onEvent,
    signal,
    baselineRuns: baseline?.runs ?? null,
    phaseMs: new Map<TrialPhase, number>(),
  };
  const st: RunState = { ctx, trials, activeBeforeMs: stored.activeMs, runStartedAt };
  onEvent({
    type: 'campaign:start',
    ts: deps.now(),
    campaignId: stored.id,
    resumed: stored.resumed,
    store: spec.storePath ?? null,
    budget: spec.budget,
    trialsDone: trials.filter((t) => t.status !== 'discarded').length,
    activeMs: stored.activeMs,
  });
  if (stored.resumed) {
    const done = trials.filter((t) => t.status !== 'discarded').length;
    const ran = `${(stored.activeMs / MS_PER_MINUTE).toFixed(1)} min of running time spent (interruptions not counted)`;
    onEvent({
      type: 'log',
      ts: deps.now(),
      level: 'info',
      message: `resuming campaign ${stored.id}: ${done} trial(s) already done, ${ran}`,
    });
    await reconcileService(st, interrupted);
  }
  try {
    const finish = await runSteps(st);
    return await finishCampaign(st.ctx, st.trials, finish, opts.restore);
  } catch (e) {
    if (signal?.aborted) {
      await handleAbort(st);
      return interruptedResult(st, stored.id, baseline ?? null);
    }
    if (e instanceof ToolError && (e.code === 'E_STORE_FULL' || e.code === 'E_LOCAL_STATE'))
      await recoverAfterStoreFailure(st, e);
    else if (!st.trials.some((t) => ['ok', 'failed', 'infeasible'].includes(t.status)))
      deps.store.markNeverStarted?.(stored.id, (e as Error).message);
    throw e;
  }
}

// Re-exported for the CLI's dry run and for the report: the key of a config.
export { configKey };
