// One trial as one Slurm job: submit (pinned to a node), wait for it to run, for the engine to answer, benchmark,
// end it with a drain that fits KillWait, and read sacct + output into the verdict. The job is ended in a finally:
// whatever happens (failure, Ctrl-C), no trial job outlives its trial.
import type { EventSink } from '../tune/events.js';
import { checkConstraints, evaluateObjective } from '../tune/objective.js';
import { trialNumber, type TrialRecord } from '../tune/types.js';
import type { SlurmCampaignDeps, SlurmCampaignSpec } from './ports.js';
import { endJob, planJobEnd, readJobVerdict, waitForEngine, waitForStart } from './lifecycle.js';
import { buildSbatchScript } from './script.js';

/** Where a trial runs: a node it is pinned to, or anywhere but some nodes. */
export interface Placement {
  node: string | null;
  exclude: string[];
}

/** Shared by every trial of a campaign. */
export interface JobTrialContext {
  deps: SlurmCampaignDeps;
  spec: SlurmCampaignSpec;
  campaignId: number;
  killWaitSec: number;
  onEvent: EventSink;
  signal?: AbortSignal;
}

/** A finished job trial: its record (runs kept unscored until the baseline is known) and where it ran. */
export interface JobTrialResult {
  rec: TrialRecord;
  node: string | null;
  jobId: string | null;
}

// The sbatch script of a trial on a placement.
export function scriptFor(spec: SlurmCampaignSpec, rec: TrialRecord, at: Placement): string {
  return buildSbatchScript({
    ...spec.jobFor(rec.config, rec.index),
    name: `${spec.jobPrefix}-t${trialNumber(rec.index)}`,
    nodelist: at.node,
    exclude: at.exclude,
  });
}

// Score a measured trial (objective, constraints against the baseline's runs); failed trials pass through.
export function scoreTrial(
  rec: TrialRecord,
  spec: Pick<SlurmCampaignSpec, 'objective' | 'constraints'>,
  baselineRuns: TrialRecord['runs'] | null,
): TrialRecord {
  if (rec.status !== 'ok') return rec;
  const violations = checkConstraints(rec.runs, spec.constraints, rec.kind === 'baseline' ? rec.runs : baselineRuns);
  const objective = evaluateObjective(rec.runs, spec.objective);
  const failedRequests = rec.runs.reduce((s, r) => s + r.requests.failed, 0);
  if (failedRequests > 0) violations.push(`${failedRequests} benchmark request(s) failed`);
  if (objective === null) violations.push('objective not measured');
  return { ...rec, objective, violations, constraintsOk: violations.length === 0 };
}

// Run one trial job to its end; an abort still ends the job before it rethrows.
export async function runJobTrial(ctx: JobTrialContext, rec: TrialRecord, at: Placement): Promise<JobTrialResult> {
  const { deps, spec, onEvent, signal, campaignId } = ctx;
  const n = trialNumber(rec.index);
  const ev = (jobId: string, node: string | null, state: string, message: string) =>
    onEvent({ type: 'slurm:job', ts: deps.now(), trial: n, jobId, node, state, message });
  const phase = (p: 'deploy' | 'wait-ready' | 'warmup' | 'bench' | 'soak' | 'diagnose') =>
    onEvent({ type: 'trial:phase', ts: deps.now(), trial: n, phase: p, expectedMs: null });
  const job = spec.jobFor(rec.config, rec.index);
  phase('deploy');
  const jobId = await deps.client.submit(scriptFor(spec, rec, at));
  deps.store.recordJob(campaignId, rec.index, jobId);
  ev(jobId, at.node, 'submitted', at.node ? `pinned to ${at.node}` : 'any free node');
  let node: string | null = null;
  let out: TrialRecord = rec;
  let failure: string | null = null;
  let endedAs = { state: 'ended', why: '' };
  try {
    const started = await waitForStart(deps.client, jobId, {
      timeoutMs: spec.startTimeoutMs,
      signal,
      pollMs: spec.pollMs,
    });
    if ('ended' in started) failure = started.reason;
    else {
      node = started.node;
      deps.store.updateJob(campaignId, jobId, { node, state: 'RUNNING' });
      ev(jobId, node, 'RUNNING', `engine starting on port ${job.port}`);
      phase('wait-ready');
      const url = spec.urlFor(node, job.port);
      const ready = await waitForEngine(deps.client, jobId, {
        url: `${url}${spec.healthPath}`,
        outputPath: job.output.replace(/%j/g, jobId),
        engine: spec.engine,
        timeoutMs: spec.readyTimeoutMs,
        signal,
        pollMs: spec.pollMs,
      });
      if (!ready.ready) failure = ready.reason;
      else {
        const bench = deps.benchFor(url);
        phase('warmup');
        await bench.run('warmup', onEvent, signal);
        const kind = rec.kind === 'soak' ? 'soak' : 'bench';
        phase(kind);
        const { runs, samples } = await bench.run(kind, onEvent, signal);
        signal?.throwIfAborted();
        deps.store.saveSamples(campaignId, rec.index, samples);
        out = { ...rec, runs, status: 'ok', restarts: 1 };
      }
    }
  } catch (e) {
    if (signal?.aborted) throw e;
    failure = `benchmark failed: ${(e as Error).message}`;
  } finally {
    const plan = failure ? planJobEnd(0, ctx.killWaitSec) : planJobEnd(spec.drainSec, ctx.killWaitSec);
    const ended = await endJob(deps.client, jobId, plan, ctx.killWaitSec, spec.pollMs).catch(() => ({
      drained: false,
      job: null,
    }));
    deps.store.updateJob(campaignId, jobId, { state: ended.job?.state ?? 'ENDED', ended: true });
    endedAs = { state: ended.job?.stateText ?? 'ended', why: plan.why };
  }
  phase('diagnose');
  const diag = await readJobVerdict(deps.client, jobId, {
    killWaitSec: ctx.killWaitSec,
    cancelledByUs: true,
    engine: spec.engine,
    outputPath: job.output.replace(/%j/g, jobId),
  }).catch(() => null);
  ev(
    jobId,
    node,
    endedAs.state,
    `${endedAs.why}${diag ? `; verdict: ${diag.verdict.class}${diag.verdict.detail ? `/${diag.verdict.detail}` : ''}` : ''}`,
  );
  if (diag?.verdict.class === 'stop_timeout') {
    onEvent({ type: 'log', ts: deps.now(), level: 'warn', message: `trial ${n}: ${diag.verdict.summary}` });
  }
  if (failure) {
    if (diag) onEvent({ type: 'diagnosis', ts: deps.now(), verdict: diag.verdict });
    return {
      rec: { ...rec, status: 'failed', violations: [failure], verdict: diag?.verdict ?? null, restarts: 1 },
      node,
      jobId,
    };
  }
  return { rec: out, node, jobId };
}
