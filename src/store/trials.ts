// Trials and their state machine (planned → deploying → running → measured|failed|infeasible|skipped), so that
// --resume knows exactly what was in flight when spectune died.
import type { BenchRun, RequestSample } from '../bench/types.js';
import type { Verdict } from '../diagnose/index.js';
import type { CapacityFacts, EngineSettings } from '../engines/types.js';
import { ToolError } from '../errors.js';
import type { Db } from './db.js';
import { fromJson, isoNow, toJson, toJsonOrNull, toText } from './json.js';
import { insertBenchRuns, insertSamples, insertVerdict } from './results.js';

/** Where a trial is in its life. */
export type TrialState = 'planned' | 'deploying' | 'running' | 'measured' | 'failed' | 'infeasible' | 'skipped';
/** States that mean "finished": never repeated on resume. */
export const FINAL_STATES: readonly TrialState[] = ['measured', 'failed', 'infeasible', 'skipped'];

// Legal moves; anything else is a bug in the tuner (e.g. recording a result twice).
const TRANSITIONS: Record<TrialState, TrialState[]> = {
  planned: ['deploying', 'running', 'failed', 'infeasible', 'skipped'],
  deploying: ['running', 'failed', 'infeasible', 'skipped'],
  running: ['measured', 'failed', 'skipped'],
  measured: [],
  failed: [],
  infeasible: [],
  skipped: [],
};

/** A stored trial. */
export interface Trial {
  id: number;
  campaignId: number;
  seq: number;
  configId: number | null;
  params: EngineSettings;
  purpose: string;
  reason: string;
  state: TrialState;
  objective: number | null;
  constraintsOk: boolean | null;
  constraintNotes: string[];
  capacity: CapacityFacts | null;
  prediction: unknown;
  predictionWrong: boolean | null;
  engineVersion: string | null;
  error: string | null;
  startedAt: string;
  updatedAt: string;
  finishedAt: string | null;
}

interface TrialRow {
  id: number;
  campaign_id: number;
  seq: number;
  config_id: number | null;
  params_json: string;
  purpose: string;
  reason: string;
  state: TrialState;
  objective: number | null;
  constraints_ok: number | null;
  constraint_notes_json: string | null;
  capacity_json: string | null;
  prediction_json: string | null;
  prediction_wrong: number | null;
  engine_version: string | null;
  error: string | null;
  started_at: string;
  updated_at: string;
  finished_at: string | null;
}

// SQLite integer → boolean | null.
const bool = (v: number | null): boolean | null => (v === null ? null : v !== 0);

// Row → domain object.
function toTrial(r: TrialRow): Trial {
  return {
    id: r.id,
    campaignId: r.campaign_id,
    seq: r.seq,
    configId: r.config_id,
    params: fromJson(r.params_json) ?? {},
    purpose: r.purpose,
    reason: r.reason,
    state: r.state,
    objective: r.objective,
    constraintsOk: bool(r.constraints_ok),
    constraintNotes: fromJson(r.constraint_notes_json) ?? [],
    capacity: fromJson(r.capacity_json),
    prediction: fromJson(r.prediction_json),
    predictionWrong: bool(r.prediction_wrong),
    engineVersion: r.engine_version,
    error: r.error,
    startedAt: r.started_at,
    updatedAt: r.updated_at,
    finishedAt: r.finished_at,
  };
}

/** The deployable form of a trial's config (unit text and ExecStart), stored redacted. */
export interface ConfigSnapshot {
  settings?: EngineSettings;
  execStart?: string;
  dropin?: string;
}

/** What is known when a trial is planned. */
export interface TrialStartInput {
  campaignId: number;
  params: EngineSettings;
  purpose: string;
  reason: string;
  config?: ConfigSnapshot;
  prediction?: unknown;
  ts?: string;
}

// Record a planned trial (and its config snapshot) before anything touches the service.
export function recordTrialStart(db: Db, input: TrialStartInput): Trial {
  const ts = isoNow(input.ts);
  return db.transaction(() => {
    const next = db
      .prepare('SELECT COALESCE(MAX(seq), 0) + 1 AS n FROM trials WHERE campaign_id = ?')
      .get(input.campaignId) as { n: number };
    let configId: number | null = null;
    if (input.config) {
      const c = input.config;
      configId = Number(
        db
          .prepare(
            'INSERT INTO configs (campaign_id, params_json, settings_json, exec_start, dropin, created_at) VALUES (?, ?, ?, ?, ?, ?)',
          )
          .run(
            input.campaignId,
            toJson(input.params),
            toJsonOrNull(c.settings),
            toText(c.execStart),
            toText(c.dropin),
            ts,
          ).lastInsertRowid,
      );
    }
    const info = db
      .prepare(
        `INSERT INTO trials (campaign_id, seq, config_id, params_json, purpose, reason, state, prediction_json, started_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, 'planned', ?, ?, ?)`,
      )
      .run(
        input.campaignId,
        next.n,
        configId,
        toJson(input.params),
        input.purpose,
        toText(input.reason),
        toJsonOrNull(input.prediction),
        ts,
        ts,
      );
    return getTrial(db, Number(info.lastInsertRowid));
  })();
}

// Read one trial.
export function getTrial(db: Db, id: number): Trial {
  const row = db.prepare('SELECT * FROM trials WHERE id = ?').get(id) as TrialRow | undefined;
  if (!row) throw new ToolError('E_STORE', `no trial ${id} in the store`);
  return toTrial(row);
}

// Check a state change against the state machine.
function assertTransition(t: Trial, to: TrialState): void {
  if (!TRANSITIONS[t.state].includes(to)) {
    throw new ToolError('E_STORE', `trial ${t.id} cannot go from ${t.state} to ${to}`, {
      hint: 'a finished trial is never rewritten',
    });
  }
}

// Move an unfinished trial to its next non-final phase (deploying, running).
export function markTrialState(db: Db, id: number, state: 'deploying' | 'running', ts?: string): Trial {
  assertTransition(getTrial(db, id), state);
  db.prepare('UPDATE trials SET state = ?, updated_at = ? WHERE id = ?').run(state, isoNow(ts), id);
  return getTrial(db, id);
}

/** Everything a finished trial produced. */
export interface TrialResultInput {
  state: 'measured' | 'failed' | 'infeasible' | 'skipped';
  objective?: number | null;
  constraintsOk?: boolean | null;
  constraintNotes?: string[];
  runs?: BenchRun[];
  samples?: RequestSample[];
  verdict?: Verdict | null;
  capacity?: CapacityFacts | null;
  engineVersion?: string | null;
  predictionWrong?: boolean | null;
  error?: string | null;
  ts?: string;
}

// Record the outcome of a trial atomically: either all of it is stored or none (a SIGKILL mid-write loses nothing).
export function recordTrialResult(db: Db, id: number, r: TrialResultInput): Trial {
  const ts = isoNow(r.ts);
  db.transaction(() => {
    assertTransition(getTrial(db, id), r.state);
    db.prepare(
      `UPDATE trials SET state = ?, objective = ?, constraints_ok = ?, constraint_notes_json = ?, capacity_json = ?, engine_version = ?,
       prediction_wrong = ?, error = ?, updated_at = ?, finished_at = ? WHERE id = ?`,
    ).run(
      r.state,
      r.objective ?? null,
      r.constraintsOk == null ? null : Number(r.constraintsOk),
      toJsonOrNull(r.constraintNotes),
      toJsonOrNull(r.capacity),
      toText(r.engineVersion),
      r.predictionWrong == null ? null : Number(r.predictionWrong),
      toText(r.error),
      ts,
      ts,
      id,
    );
    if (r.runs?.length) insertBenchRuns(db, id, r.runs);
    if (r.samples?.length) insertSamples(db, id, r.samples);
    if (r.verdict) insertVerdict(db, id, r.verdict, ts);
  })();
  return getTrial(db, id);
}

// All trials of a campaign in order.
export function listTrials(db: Db, campaignId: number): Trial[] {
  return (db.prepare('SELECT * FROM trials WHERE campaign_id = ? ORDER BY seq').all(campaignId) as TrialRow[]).map(
    toTrial,
  );
}

// The trial that was in flight when spectune stopped (planned, deploying or running), or null.
export function findUnfinishedTrial(db: Db, campaignId: number): Trial | null {
  const row = db
    .prepare(
      `SELECT * FROM trials WHERE campaign_id = ? AND state IN ('planned', 'deploying', 'running') ORDER BY seq DESC LIMIT 1`,
    )
    .get(campaignId) as TrialRow | undefined;
  return row ? toTrial(row) : null;
}

// The deployable snapshot of a trial's config (for rollback and the final ExecStart).
export function getTrialConfig(db: Db, trial: Trial): (ConfigSnapshot & { params: EngineSettings }) | null {
  if (trial.configId === null) return null;
  const r = db.prepare('SELECT * FROM configs WHERE id = ?').get(trial.configId) as
    | { params_json: string; settings_json: string | null; exec_start: string | null; dropin: string | null }
    | undefined;
  if (!r) return null;
  return {
    params: fromJson(r.params_json) ?? {},
    settings: fromJson(r.settings_json) ?? undefined,
    execStart: r.exec_start ?? undefined,
    dropin: r.dropin ?? undefined,
  };
}
