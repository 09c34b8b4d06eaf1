// Campaign rows: one tuning campaign = one config, many trials.
import type { EngineName, EngineSettings } from '../engines/types.js';
import { ToolError } from '../errors.js';
import type { Db } from './db.js';
import { fromJson, isoNow, toJson, toJsonOrNull, toText } from './json.js';

/** Lifecycle of a campaign; "interrupted" is set by --resume when it finds the previous run gone. */
export type CampaignStatus = 'running' | 'done' | 'aborted' | 'interrupted';

/** One unit as the campaign left it: the operator's own ExecStart, the one in force, spectune's drop-in. */
export interface UnitSnapshot {
  host: string;
  unit: string;
  /** ExecStart as the operator wrote it (the unit file and its other drop-ins; spectune's drop-in left out). */
  operatorExecStart: string | null;
  /** ExecStart in force (spectune's drop-in included). */
  execStart: string | null;
  dropInPath: string;
  /** spectune's drop-in text, or null when the unit runs the operator's own config. */
  dropIn: string | null;
}

/** What the service runs when the campaign ends (read from the host after the final deploy). */
export interface CampaignEndState {
  /** When it was read (ISO-8601). */
  ts: string;
  /** The tuned settings in force. */
  settings: EngineSettings;
  healthy: boolean;
  /** rank0 first for a multi-host target. */
  units: UnitSnapshot[];
}

/** A stored campaign. */
export interface Campaign {
  id: number;
  name: string;
  status: CampaignStatus;
  engine: EngineName;
  /** The normalised config snapshot (redacted). */
  config: Record<string, unknown>;
  /** Settings in force before the campaign (the baseline to return to with --restore). */
  baseline: EngineSettings | null;
  bestTrialId: number | null;
  summary: string | null;
  /** The campaign ran on spectune's SIMULATED engine (`spectune demo`): its config snapshot says `simulated: true`. */
  simulated: boolean;
  /** The service's state when the campaign ended (null until it ends, and for stores of older versions). */
  endState: CampaignEndState | null;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
}

interface CampaignRow {
  id: number;
  name: string;
  status: CampaignStatus;
  engine: EngineName;
  config_json: string;
  baseline_json: string | null;
  best_trial_id: number | null;
  summary: string | null;
  end_state_json?: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

// Whether a campaign's config snapshot marks it as run on the simulated engine.
function isSimulatedConfig(config: unknown): boolean {
  return !!config && typeof config === 'object' && (config as { simulated?: unknown }).simulated === true;
}

// Row → domain object.
function toCampaign(r: CampaignRow): Campaign {
  return {
    id: r.id,
    name: r.name,
    status: r.status,
    engine: r.engine,
    config: fromJson(r.config_json) ?? {},
    baseline: fromJson(r.baseline_json),
    bestTrialId: r.best_trial_id,
    summary: r.summary,
    simulated: isSimulatedConfig(fromJson(r.config_json)),
    endState: fromJson(r.end_state_json ?? null),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    finishedAt: r.finished_at,
  };
}

// Start a campaign; the config snapshot is stored redacted.
export function createCampaign(
  db: Db,
  input: { name: string; engine: EngineName; config: unknown; baseline?: EngineSettings; ts?: string },
): Campaign {
  const ts = isoNow(input.ts);
  const info = db
    .prepare(
      `INSERT INTO campaigns (name, status, engine, config_json, baseline_json, created_at, updated_at) VALUES (?, 'running', ?, ?, ?, ?, ?)`,
    )
    .run(toText(input.name), input.engine, toJson(input.config), toJsonOrNull(input.baseline), ts, ts);
  return getCampaign(db, Number(info.lastInsertRowid));
}

// Read one campaign or fail with E_CAMPAIGN_NOT_FOUND.
export function getCampaign(db: Db, id: number): Campaign {
  const row = db.prepare('SELECT * FROM campaigns WHERE id = ?').get(id) as CampaignRow | undefined;
  if (!row)
    throw new ToolError('E_CAMPAIGN_NOT_FOUND', `no campaign ${id} in the store`, {
      hint: 'run `spectune report` without an id for the latest',
    });
  return toCampaign(row);
}

// The most recent campaign, or null in an empty store.
export function latestCampaign(db: Db): Campaign | null {
  const row = db.prepare('SELECT * FROM campaigns ORDER BY id DESC LIMIT 1').get() as CampaignRow | undefined;
  return row ? toCampaign(row) : null;
}

/** Summary text of a campaign that ended before its first trial (status aborted). */
export const NEVER_STARTED = 'never started: no trial ran';
/** SQL condition: campaign `c` started a trial (one in flight counts: a resume goes on with it) and is not marked never started. */
const STARTED = `EXISTS (SELECT 1 FROM trials t WHERE t.campaign_id = c.id) AND NOT (c.status = 'aborted' AND c.summary LIKE 'never started:%')`;

// Whether a campaign has a trial with a result (measured, failed or refused).
export function campaignRan(db: Db, id: number): boolean {
  return Boolean(
    db
      .prepare(`SELECT 1 FROM trials t WHERE t.campaign_id = ? AND t.state IN ('measured', 'failed', 'infeasible')`)
      .get(id),
  );
}

// The most recent campaign that started a trial (optionally of one name), or null: a campaign that died before its
// first trial (still "running" with no trial, or marked never started) must not hide the one that ran.
export function latestStartedCampaign(db: Db, name?: string): Campaign | null {
  const row = db
    .prepare(`SELECT * FROM campaigns c WHERE ${STARTED} AND (? IS NULL OR c.name = ?) ORDER BY c.id DESC LIMIT 1`)
    .get(name ?? null, name ?? null) as CampaignRow | undefined;
  return row ? toCampaign(row) : null;
}

// Mark the campaigns after `afterId` (of one name, or all) that never started a trial and are not marked yet as
// aborted "never started: …"; returns their ids.
export function markNeverStarted(
  db: Db,
  opts: { afterId: number; name?: string; why?: string; ts?: string },
): number[] {
  const rows = db
    .prepare(
      `SELECT id FROM campaigns c WHERE c.id > ? AND c.status IN ('running', 'interrupted') AND (? IS NULL OR c.name = ?)
       AND NOT EXISTS (SELECT 1 FROM trials t WHERE t.campaign_id = c.id) ORDER BY c.id`,
    )
    .all(opts.afterId, opts.name ?? null, opts.name ?? null) as { id: number }[];
  for (const r of rows)
    updateCampaign(db, r.id, { status: 'aborted', summary: opts.why ?? NEVER_STARTED, ts: opts.ts });
  return rows.map((r) => r.id);
}

// All campaigns, newest first.
export function listCampaigns(db: Db): Campaign[] {
  return (db.prepare('SELECT * FROM campaigns ORDER BY id DESC').all() as CampaignRow[]).map(toCampaign);
}

// Update status, baseline, best trial, summary or end state.
export function updateCampaign(
  db: Db,
  id: number,
  patch: {
    status?: CampaignStatus;
    baseline?: EngineSettings;
    bestTrialId?: number | null;
    summary?: string;
    endState?: CampaignEndState | null;
    ts?: string;
  },
): Campaign {
  const cur = getCampaign(db, id);
  const ts = isoNow(patch.ts);
  const status = patch.status ?? cur.status;
  const finished = status === 'done' || status === 'aborted' ? (cur.finishedAt ?? ts) : null;
  db.prepare(
    'UPDATE campaigns SET status = ?, baseline_json = ?, best_trial_id = ?, summary = ?, end_state_json = ?, updated_at = ?, finished_at = ? WHERE id = ?',
  ).run(
    status,
    toJsonOrNull(patch.baseline ?? cur.baseline),
    patch.bestTrialId === undefined ? cur.bestTrialId : patch.bestTrialId,
    toText(patch.summary ?? cur.summary),
    toJsonOrNull(patch.endState === undefined ? cur.endState : patch.endState),
    ts,
    finished,
    id,
  );
  return getCampaign(db, id);
}
