// Binds the campaign runner's store port to the SQLite store: trial index = seq - 1, discarded = skipped+interrupted.
import type { RequestSample } from '../bench/types.js';
import type { EngineName } from '../engines/types.js';
import { ToolError } from '../errors.js';
import {
  createCampaign,
  getTrial,
  latestCampaign,
  latestStartedCampaign,
  campaignRan,
  listBenchRuns,
  markNeverStarted,
  NEVER_STARTED,
  listRunSegments,
  listTrials,
  listVerdicts,
  markTrialState,
  recordRunStart,
  recordTrialResult,
  recordTrialStart,
  touchRun,
  updateCampaign,
  type Db,
  type Trial,
} from '../store/index.js';
import { sumActiveMs } from '../tune/active-time.js';
import type { FeasibilityPrediction, TrialKind, TrialRecord, TrialStatus } from '../tune/types.js';
import type { StoredCampaign, TuneStorePort } from './tune-ports.js';

/** The error text of a trial skipped because spectune stopped while it was in flight (one word for it everywhere: skipped). */
const SKIPPED = 'skipped: spectune stopped during this trial; its result is discarded and the trial redone on resume';

// Map a runner status to the store's final state.
function toStoreState(s: TrialStatus): 'measured' | 'failed' | 'infeasible' | 'skipped' {
  if (s === 'ok') return 'measured';
  if (s === 'failed' || s === 'infeasible') return s;
  return 'skipped';
}

// Map a stored trial back to the runner's status.
function toStatus(t: Trial): TrialStatus {
  if (t.state === 'measured') return 'ok';
  if (t.state === 'failed' || t.state === 'infeasible') return t.state;
  if (t.state === 'skipped') return 'discarded';
  return 'running';
}

// A stored trial as the runner's record (restarts are implied: one per deploy, none for baseline/infeasible).
export function toTrialRecord(db: Db, t: Trial): TrialRecord {
  const status = toStatus(t);
  const kind = (['baseline', 'search', 'soak'].includes(t.purpose) ? t.purpose : 'search') as TrialKind;
  const deployed = kind !== 'baseline' && (status === 'ok' || status === 'failed');
  return {
    index: t.seq - 1,
    kind,
    config: t.params,
    status,
    reason: t.reason,
    objective: t.objective,
    constraintsOk: t.constraintsOk,
    violations: t.constraintNotes,
    runs: listBenchRuns(db, t.id),
    verdict: listVerdicts(db, t.id)[0] ?? null,
    prediction: (t.prediction as FeasibilityPrediction | null) ?? null,
    capacity: t.capacity,
    restarts: deployed ? 1 : 0,
    startedAt: Date.parse(t.startedAt),
    endedAt: t.finishedAt ? Date.parse(t.finishedAt) : null,
  };
}

// Reopen the newest unfinished campaign of this name that ran a trial, for --resume. Campaigns that died before their
// first trial have nothing to resume: they are skipped (and marked aborted, "never started") instead of hiding it.
function reopen(db: Db, name: string): StoredCampaign {
  const c = latestStartedCampaign(db, name);
  const newest = latestCampaign(db);
  const empty =
    newest && newest.id !== c?.id && newest.name === name ? ` (campaign ${newest.id} never started a trial)` : '';
  if (!c || c.status === 'done' || c.status === 'aborted') {
    throw new ToolError(
      'E_CAMPAIGN_NOT_FOUND',
      `no unfinished campaign "${name}" to resume in this store${c ? `: the last one that ran, campaign ${c.id}, is ${c.status}` : ''}${empty}`,
      { hint: 'run without --resume to start a new campaign' },
    );
  }
  markNeverStarted(db, { afterId: c.id, name });
  updateCampaign(db, c.id, { status: 'running' });
  const trials = listTrials(db, c.id).map((t) => toTrialRecord(db, t));
  const spans = listRunSegments(db, c.id).map((r) => ({
    startedAt: Date.parse(r.startedAt),
    lastActiveAt: Date.parse(r.lastActiveAt),
  }));
  return { id: c.id, activeMs: sumActiveMs(spans, trials), trials, resumed: true };
}

// Milliseconds since the epoch as the store's ISO-8601 text.
const toIso = (ms: number) => new Date(ms).toISOString();

// Write a runner record: first sight creates the row (planned), a final status records the result once.
function saveRecord(
  db: Db,
  ids: Map<number, number>,
  campaignId: number,
  t: TrialRecord,
  samples: RequestSample[],
): void {
  let id = ids.get(t.index);
  if (id === undefined) {
    const row = recordTrialStart(db, {
      campaignId,
      params: t.config,
      purpose: t.kind,
      reason: t.reason,
      prediction: t.prediction,
    });
    if (row.seq !== t.index + 1)
      throw new ToolError('E_STORE', `trial numbering out of step (seq ${row.seq} for trial ${t.index})`);
    id = row.id;
    ids.set(t.index, id);
  }
  if (t.status === 'running') return;
  if (t.status === 'ok' && getTrial(db, id).state === 'planned') markTrialState(db, id, 'running');
  recordTrialResult(db, id, {
    state: toStoreState(t.status),
    objective: t.objective,
    constraintsOk: t.constraintsOk,
    constraintNotes: t.violations,
    runs: t.runs,
    samples,
    verdict: t.verdict,
    capacity: t.capacity,
    predictionWrong:
      t.prediction && t.status !== 'infeasible' ? t.prediction.feasible === (t.status === 'failed') : null,
    error: t.status === 'discarded' ? skippedText(t) : t.status === 'failed' ? t.violations.join('; ') : null,
  });
}

// Why a trial was skipped, as the store and the report word it: its own reason (a benchmark cut by the network) or
// spectune stopping during it.
function skippedText(t: TrialRecord): string {
  return t.violations.length ? `skipped: ${t.violations.join('; ')}; redone` : SKIPPED;
}

// The store port over an open SQLite store.
export function createSqliteTuneStore(db: Db, engine: EngineName): TuneStorePort {
  const ids = new Map<number, number>();
  const pending = new Map<number, RequestSample[]>();
  let run: number | null = null;
  return {
    openCampaign({ resume, name, spec, now }) {
      const c = resume
        ? reopen(db, name)
        : { ...createCampaign(db, { name, engine, config: spec }), activeMs: 0, trials: [], resumed: false };
      if (resume) for (const t of listTrials(db, c.id)) ids.set(t.seq - 1, t.id);
      run = recordRunStart(db, c.id, toIso(now)).id;
      return { id: c.id, activeMs: c.activeMs, trials: c.trials, resumed: c.resumed };
    },
    markActive(_campaignId, now) {
      if (run !== null) touchRun(db, run, toIso(now));
    },
    saveTrial(campaignId, t) {
      saveRecord(db, ids, campaignId, t, pending.get(t.index) ?? []);
      if (t.status !== 'running') pending.delete(t.index);
    },
    saveSamples(_campaignId, index, samples) {
      pending.set(index, samples);
    },
    markNeverStarted(campaignId, why) {
      if (!campaignRan(db, campaignId))
        updateCampaign(db, campaignId, { status: 'aborted', summary: `${NEVER_STARTED}: ${why}` });
    },
    finishCampaign(campaignId, r) {
      const best = r.bestTrial === null ? null : (ids.get(r.bestTrial) ?? null);
      const endState = r.endState ? { ts: toIso(r.now), ...r.endState } : null;
      updateCampaign(db, campaignId, { status: 'done', bestTrialId: best, summary: r.summary, endState });
    },
  };
}

// Mark a campaign interrupted (Ctrl-C), so --resume finds it; with the best trial so far (0-based index) and the
// summary, so the report names the winner the summary printed.
export function markCampaignInterrupted(
  db: Db,
  campaignId: number,
  at: { bestIndex?: number | null; summary?: string } = {},
): void {
  const best =
    at.bestIndex === undefined || at.bestIndex === null
      ? null
      : (listTrials(db, campaignId).find((t) => t.seq === at.bestIndex! + 1)?.id ?? null);
  updateCampaign(db, campaignId, {
    status: 'interrupted',
    bestTrialId: best,
    ...(at.summary ? { summary: at.summary } : {}),
  });
}
