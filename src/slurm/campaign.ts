// The Slurm campaign: trials as jobs, up to one per free node at once. The search proposes batches (batch.ts); the
// winner is confirmed on a node other than the one it won on, so a faster node cannot win by itself; every job is
// recorded by id, and whatever way the campaign ends (success, error, Ctrl-C) none of its jobs is left running.
import { ToolError } from '../errors.js';
import type { EventSink } from '../tune/events.js';
import type { CampaignResult } from '../tune/result.js';
import { configKey, findBest } from '../tune/best.js';
import { evaluateObjective } from '../tune/objective.js';
import { findBestPerConcurrency } from '../tune/per-concurrency.js';
import { decideNextStep, findDisqualified, reconcileTrials } from '../tune/step.js';
import { trialNumber, type TrialKind, type TrialRecord, type TuneConfig } from '../tune/types.js';
import { proposeBatch, type BatchItem } from './batch.js';
import { LIVE_STATES } from './client.js';
import { endJob, planJobEnd } from './lifecycle.js';
import type { SlurmCampaignDeps, SlurmCampaignSpec } from './ports.js';
import { runJobTrial, scoreTrial, scriptFor, type JobTrialContext, type Placement } from './trial.js';

/** What a Slurm campaign ends with (the tuner's CampaignResult shape, plus where trials ran). */
export interface SlurmCampaignResult extends CampaignResult {
  /** Node each trial ran on (by 0-based index). */
  nodes: Record<number, string | null>;
  /** Wall time of this run of the campaign. */
  wallMs: number;
  /** Trials run at once at most. */
  parallel: number;
}

/** Options of one run. */
export interface SlurmCampaignOptions {
  resume: boolean;
}

/** The running campaign's state. */
interface State {
  ctx: JobTrialContext;
  trials: TrialRecord[];
  nodes: Map<number, string | null>;
  /** Each node's speed relative to the others, from the baseline measured on every node (objective / factor). */
  factors: Map<string, number>;
}

// Start a trial record and persist it as running.
function startTrial(st: State, kind: TrialKind, config: TuneConfig, reason: string): TrialRecord {
  const { deps, campaignId, onEvent } = st.ctx;
  const index = st.trials.reduce((m, t) => Math.max(m, t.index + 1), 0);
  const rec: TrialRecord = {
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
    startedAt: deps.now(),
    endedAt: null,
  };
  st.trials = [...st.trials, rec];
  deps.store.saveTrial(campaignId, rec);
  onEvent({ type: 'trial:start', ts: rec.startedAt, campaignId, trial: trialNumber(index), config, reason });
  return rec;
}

// Record and announce a finished trial.
function endTrial(st: State, rec: TrialRecord): void {
  const { deps, campaignId, onEvent } = st.ctx;
  const done = { ...rec, endedAt: deps.now() };
  st.trials = st.trials.map((t) => (t.index === rec.index ? done : t));
  deps.store.saveTrial(campaignId, done);
  const status =
    done.status === 'ok' && done.constraintsOk === false
      ? 'violates'
      : done.status === 'ok' || done.status === 'failed' || done.status === 'infeasible'
        ? done.status
        : 'skipped';
  onEvent({
    type: 'trial:end',
    ts: deps.now(),
    trial: trialNumber(done.index),
    status,
    objective: done.objective,
    verdict: done.verdict,
    violations: done.violations,
  });
}

// Node factors from the baseline measured on several nodes: each node's objective over their mean (pure). Spreads
// within the noise margin are noise, not node speed: dividing by them would only add noise, so none is returned.
export function nodeFactors(
  baselines: { node: string | null; objective: number | null }[],
  noiseMargin: number,
): Map<string, number> {
  const ok = baselines.filter(
    (b): b is { node: string; objective: number } => b.node !== null && b.objective !== null && b.objective > 0,
  );
  if (ok.length < 2) return new Map();
  const mean = ok.reduce((s, b) => s + b.objective, 0) / ok.length;
  const factors = new Map(ok.map((b) => [b.node, b.objective / mean]));
  return [...factors.values()].some((f) => Math.abs(f - 1) > noiseMargin) ? factors : new Map();
}

// Run a batch at once, one trial per placement; results are scored after the batch (the baseline may be in it), and
// objectives are put on a common scale by the node factors, so a faster node cannot make a candidate win.
async function runBatch(st: State, items: { kind: TrialKind; item: BatchItem }[], places: Placement[]): Promise<void> {
  const recs = items.map(({ kind, item }) => startTrial(st, kind, item.config, item.reason));
  const settled = await Promise.allSettled(recs.map((rec, i) => runJobTrial(st.ctx, rec, places[i])));
  const rejected = settled.find((s) => s.status === 'rejected');
  const results = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const baselineRuns =
    [...st.trials, ...results.map((r) => r.rec)].find((t) => t.kind === 'baseline' && t.status === 'ok')?.runs ?? null;
  const scored = results.map((r) => ({ ...r, rec: scoreTrial(r.rec, st.ctx.spec, baselineRuns) }));
  const calibration = scored.filter((r) => r.rec.kind === 'baseline');
  if (calibration.length > 1) {
    st.factors = nodeFactors(
      calibration.map((r) => ({ node: r.node, objective: r.rec.objective })),
      st.ctx.spec.noiseMargin,
    );
    const shown = [...st.factors].map(([n, f]) => `${n} x${f.toFixed(3)}`).join(', ');
    const message = shown
      ? `node speeds from the baseline on every node: ${shown}; objectives are divided by them`
      : `the baseline measured alike on every node (within the ${(st.ctx.spec.noiseMargin * 100).toFixed(0)}% noise margin): no node correction`;
    st.ctx.onEvent({ type: 'log', ts: st.ctx.deps.now(), level: 'info', message });
  }
  for (const r of scored) {
    st.nodes.set(r.rec.index, r.node);
    const f = r.node ? st.factors.get(r.node) : undefined;
    endTrial(st, f && r.rec.objective !== null ? { ...r.rec, objective: r.rec.objective / f } : r.rec);
  }
  if (rejected) throw (rejected as PromiseRejectedResult).reason;
}

// Nodes one trial job takes (2 for a model split across nodes).
const nodesPerTrial = (spec: SlurmCampaignSpec) => spec.jobFor(spec.baseline, 0).nodes;

// Where the trials of a batch run: one free node each (sinfo), or anywhere when none is idle right now; a two-node
// trial is placed by Slurm on two free nodes.
async function placeBatch(st: State, count: number): Promise<Placement[]> {
  const free = nodesPerTrial(st.ctx.spec) > 1 ? [] : await st.ctx.deps.client.listFreeNodes(st.ctx.spec.partition);
  return Array.from({ length: count }, (_, i) => ({ node: free[i] ?? null, exclude: [] }));
}

// How many trials fit at once now.
async function batchSize(st: State): Promise<number> {
  const free = await st.ctx.deps.client.listFreeNodes(st.ctx.spec.partition);
  return Math.max(1, Math.min(st.ctx.spec.parallel, Math.floor(free.length / nodesPerTrial(st.ctx.spec))));
}

// The search phase: batches until the search is done or the budget spent.
async function searchPhase(st: State): Promise<void> {
  const { spec, deps, signal } = st.ctx;
  for (;;) {
    signal?.throwIfAborted();
    const settled = st.trials.filter((t) => t.status !== 'running' && t.status !== 'discarded');
    const needBaseline = !settled.some((t) => t.kind === 'baseline');
    const size = await batchSize(st);
    if (needBaseline) {
      // The baseline on every node of the batch at once: one trial's wall time, and the node factors.
      const item = { config: spec.baseline, reason: "baseline: the operator's command line", confirmProbe: false };
      const tagged = Array.from({ length: size }, (_, i) => ({
        kind: 'baseline' as TrialKind,
        item: i ? { ...item, reason: `${item.reason} (node calibration)` } : item,
      }));
      await runBatch(st, tagged, await placeBatch(st, size));
      continue;
    }
    if (!settled.some((t) => t.kind === 'baseline' && t.status === 'ok')) {
      const failed = settled.find((t) => t.kind === 'baseline');
      throw new ToolError(
        'E_SERVICE_FAILED',
        `the baseline job failed: ${failed?.verdict?.summary ?? failed?.violations.join('; ') ?? 'no result'}`,
        {
          hint: 'fix target.slurm.command (or the request: mem, partition, time) first; spectune diagnose --slurm-job ID shows why a job died',
        },
      );
    }
    const items = proposeBatch(
      (h) => {
        const p = deps.propose(h);
        return p ? { ...p, confirmProbe: p.confirmProbe === true } : null;
      },
      searchHistory(settled),
      size,
      spec.objective.goal,
    );
    if (!items.length) return;
    const places = await placeBatch(st, size);
    const tagged = items.map((item) => ({ kind: 'search' as TrialKind, item }));
    const early = items.length < size ? earlyConfirmation(st, places.slice(0, size)) : null;
    if (early) {
      places.splice(early.slot, 1);
      places.splice(items.length, 0, early.at);
      tagged.push({ kind: 'soak', item: early.item });
    }
    await runBatch(st, tagged, places.slice(0, tagged.length));
    deps.store.markActive(st.ctx.campaignId, deps.now());
  }
}

// What the search reads: one baseline (the node calibration runs repeat it) and no confirmations (they never steer it).
function searchHistory(settled: TrialRecord[]): TrialRecord[] {
  const first =
    settled.find((t) => t.kind === 'baseline' && t.status === 'ok') ?? settled.find((t) => t.kind === 'baseline');
  return settled.filter((t) => t.kind === 'search' || t === first);
}

// A node left idle by a short batch confirms the current leader on another node now, instead of in a round of its
// own at the end (if the leader changes, the new one is confirmed then).
function earlyConfirmation(st: State, places: Placement[]): { item: BatchItem; at: Placement; slot: number } | null {
  const { spec } = st.ctx;
  if (!spec.confirmElsewhere) return null;
  const w = findBest(
    st.trials,
    { goal: spec.objective.goal, noiseMargin: spec.noiseMargin },
    findDisqualified(st.trials, spec.objective.goal),
  );
  const last = w?.trials[w.trials.length - 1];
  if (
    !w ||
    !last ||
    last.kind === 'baseline' ||
    st.trials.some((t) => t.kind === 'soak' && configKey(t.config) === w.key)
  )
    return null;
  const wonOn = st.nodes.get(last.index) ?? null;
  const slot = places.findIndex((p) => p.node !== null && p.node !== wonOn);
  if (slot < 0) return null;
  return {
    item: {
      config: w.config,
      reason: `confirm trial ${trialNumber(last.index)} on another node than ${wonOn ?? '?'} (a node idle in this batch)`,
      confirmProbe: false,
    },
    at: places[slot],
    slot,
  };
}

// The endgame: confirm the winner on another node (a failed confirmation disqualifies it; the next best is confirmed).
async function confirmPhase(st: State): Promise<{ best: TrialRecord | null; why: string; note: string | null }> {
  const { spec } = st.ctx;
  for (;;) {
    const step = decideNextStep({
      trials: st.trials,
      budget: spec.budget,
      elapsedMs: 0,
      objective: spec.objective,
      noiseMargin: spec.noiseMargin,
      propose: () => null,
    });
    if (step.kind === 'finish') return { best: step.best, why: step.why, note: step.winnerNote };
    if (step.kind !== 'soak' || !spec.confirmElsewhere) {
      const w = findBest(
        st.trials,
        { goal: spec.objective.goal, noiseMargin: spec.noiseMargin },
        findDisqualified(st.trials, spec.objective.goal),
      );
      return { best: w ? w.trials[w.trials.length - 1] : null, why: 'search converged', note: w?.why ?? null };
    }
    const wonOn = st.nodes.get(step.of) ?? null;
    const free = (await st.ctx.deps.client.listFreeNodes(spec.partition)).filter((n) => n !== wonOn);
    const at: Placement = { node: free[0] ?? null, exclude: wonOn ? [wonOn] : [] };
    const reason = `confirm trial ${trialNumber(step.of)} on another node than ${wonOn ?? '?'}`;
    await runBatch(st, [{ kind: 'soak', item: { config: step.config, reason, confirmProbe: false } }], [at]);
  }
}

// On resume: end the jobs a killed campaign left (by id from the store, and by name from squeue for a job submitted
// just before the kill), and discard their trials (they are redone).
async function reconcileJobs(st: State): Promise<void> {
  const { deps, campaignId, onEvent, killWaitSec, spec } = st.ctx;
  const stored = deps.store.openJobs(campaignId);
  const named = await deps.client.listLiveJobs(`${spec.jobPrefix}-t`).catch(() => []);
  const ids = new Set([...stored.map((j) => j.jobId), ...named.map((j) => j.jobId)]);
  for (const jobId of ids) {
    const job = await deps.client.readJob(jobId);
    const live = job !== null && LIVE_STATES.has(job.state);
    if (live) await endJob(deps.client, jobId, planJobEnd(0, killWaitSec), killWaitSec, spec.pollMs);
    deps.store.updateJob(campaignId, jobId, { state: live ? 'CANCELLED' : (job?.state ?? 'UNKNOWN'), ended: true });
    onEvent({
      type: 'slurm:job',
      ts: deps.now(),
      trial: null,
      jobId,
      node: job?.nodes[0] ?? null,
      state: live ? 'cancelled' : (job?.stateText ?? 'gone'),
      message: live
        ? 'left running by the interrupted campaign: cancelled (its trial is redone)'
        : 'left by the interrupted campaign: already ended',
    });
  }
}

// Cancel every job of this run that is still live (the last line of defence; trials end their own jobs).
async function sweep(st: State): Promise<void> {
  const { deps, campaignId, killWaitSec, spec } = st.ctx;
  for (const j of deps.store.openJobs(campaignId)) {
    await endJob(deps.client, j.jobId, planJobEnd(0, killWaitSec), killWaitSec, spec.pollMs).catch(() => {});
    deps.store.updateJob(campaignId, j.jobId, { state: 'CANCELLED', ended: true });
  }
}

// One-line summary of the campaign.
function summarize(
  best: TrialRecord | null,
  baseline: TrialRecord | null,
  why: string,
  note: string | null,
  n: number,
  parallel: number,
  wallMs: number,
  confirmedOn: string | null,
): string {
  const cfg = best
    ? Object.entries(best.config)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')
    : '';
  const gain =
    best?.objective && baseline?.objective
      ? ` (${((best.objective / baseline.objective - 1) * 100).toFixed(1)}% vs baseline)`
      : '';
  const head =
    best && best.objective !== null
      ? `best ${cfg}: ${best.objective.toFixed(1)}${gain}${note ? ` — ${note}` : ''}${confirmedOn ? `; confirmed on ${confirmedOn}` : ''}`
      : 'no winner';
  return `${why}; ${head}; ${n} trials as Slurm jobs, up to ${parallel} at once, ${(wallMs / 1000).toFixed(1)} s`;
}

// Run (or resume) a Slurm campaign.
export async function runSlurmCampaign(
  deps: SlurmCampaignDeps,
  given: SlurmCampaignSpec,
  opts: SlurmCampaignOptions,
  onEvent: EventSink,
  signal?: AbortSignal,
): Promise<SlurmCampaignResult> {
  const t0 = deps.now();
  const cluster = await deps.client.readConfig();
  const stored = deps.store.openCampaign({
    resume: opts.resume,
    name: given.name,
    spec: { ...given, jobFor: undefined, urlFor: undefined },
    now: t0,
  });
  // Job names carry the campaign id, so a resume finds this campaign's jobs in squeue even when the store missed one.
  const spec: SlurmCampaignSpec = { ...given, jobPrefix: `${given.jobPrefix}-c${stored.id}` };
  const { trials, interrupted } = reconcileTrials(stored.trials);
  const ctx: JobTrialContext = { deps, spec, campaignId: stored.id, killWaitSec: cluster.killWaitSec, onEvent, signal };
  const st: State = { ctx, trials, nodes: new Map(), factors: new Map() };
  const result = (
    status: SlurmCampaignResult['status'],
    best: TrialRecord | null,
    why: string,
    note: string | null,
  ): SlurmCampaignResult => {
    const baseline = st.trials.find((t) => t.kind === 'baseline' && t.status === 'ok') ?? null;
    const confirm = best
      ? st.trials
          .filter(
            (t) => t.kind === 'soak' && t.status === 'ok' && JSON.stringify(t.config) === JSON.stringify(best.config),
          )
          .pop()
      : undefined;
    const wallMs = deps.now() - t0;
    return {
      campaignId: stored.id,
      status,
      best,
      baseline,
      trials: st.trials,
      restarts: st.trials.reduce((s, t) => s + t.restarts, 0),
      winnerNote: note,
      deployed: best ? scriptFor(spec, best, { node: null, exclude: [] }) : null,
      bestPerConcurrency: findBestPerConcurrency(st.trials),
      summary: summarize(
        best,
        baseline,
        why,
        note,
        st.trials.length,
        spec.parallel,
        wallMs,
        confirm ? (st.nodes.get(confirm.index) ?? null) : null,
      ),
      nodes: Object.fromEntries(st.nodes),
      wallMs,
      parallel: spec.parallel,
    };
  };
  try {
    if (stored.resumed) {
      for (const t of interrupted) deps.store.saveTrial(stored.id, { ...t, status: 'discarded', endedAt: deps.now() });
      await reconcileJobs(st);
      st.nodes = deps.store.jobNodes(stored.id);
      const raw = st.trials
        .filter((t) => t.kind === 'baseline' && t.status === 'ok')
        .map((t) => ({ node: st.nodes.get(t.index) ?? null, objective: evaluateObjective(t.runs, spec.objective) }));
      st.factors = nodeFactors(raw, spec.noiseMargin);
    }
    await searchPhase(st);
    const end = await confirmPhase(st);
    const out = result(end.best ? 'done' : 'no-winner', end.best, end.why, end.note);
    deps.store.finishCampaign(stored.id, {
      bestTrial: end.best?.index ?? null,
      summary: out.summary,
      now: deps.now(),
      endState: null,
    });
    onEvent({
      type: 'campaign:end',
      ts: deps.now(),
      campaignId: stored.id,
      bestConfig: end.best?.config ?? null,
      summary: out.summary,
    });
    return out;
  } catch (e) {
    if (!signal?.aborted) throw e;
    for (const t of st.trials.filter((x) => x.status === 'running')) {
      st.trials = st.trials.map((x) => (x.index === t.index ? { ...x, status: 'discarded' } : x));
      deps.store.saveTrial(stored.id, { ...t, status: 'discarded', endedAt: deps.now() });
    }
    const w = findBest(
      st.trials,
      { goal: spec.objective.goal, noiseMargin: spec.noiseMargin },
      findDisqualified(st.trials, spec.objective.goal),
    );
    const out = result(
      'interrupted',
      w ? w.trials[w.trials.length - 1] : null,
      'interrupted; run with --resume to continue',
      w?.why ?? null,
    );
    return out;
  } finally {
    await sweep(st);
  }
}
