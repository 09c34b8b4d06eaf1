// `spectune report` use case: load a campaign from the store, build the pure report model, write Markdown/HTML.
import { existsSync, readFileSync } from 'node:fs';
import { parseActionLog } from '../diagnose/index.js';
import { campaignActionLogPath } from '../service/index.js';
import { writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { loadConfig } from '../config/index.js';
import { ToolError } from '../errors.js';
import { assertSqliteFile, checkOutputFile } from '../local-files.js';
import { buildReportModel, renderHtml, renderMarkdown, type ReportInput, type ReportModel } from '../report/index.js';
import {
  closeStore,
  getCampaign,
  latestCampaign,
  latestStartedCampaign,
  listActions,
  listBenchRuns,
  listTrials,
  listVerdicts,
  openStore,
  type Db,
} from '../store/index.js';

// A campaign's service actions: the store's rows, else its action log next to the store (<store>.actions/campaign-<id>.jsonl).
function readCampaignActions(db: Db, campaignId: number): ReportInput['actions'] {
  const rows = listActions(db, { campaignId });
  if (rows.length) return rows;
  try {
    return parseActionLog(readFileSync(campaignActionLogPath(db.name, campaignId), 'utf8')).actions;
  } catch {
    return [];
  }
}

// Load everything a report needs about one campaign (the latest when id is omitted).
export function loadReportInput(db: Db, campaignId?: number, now: () => Date = () => new Date()): ReportInput {
  const c = campaignId === undefined ? (latestStartedCampaign(db) ?? latestCampaign(db)) : getCampaign(db, campaignId);
  if (!c)
    throw new ToolError('E_CAMPAIGN_NOT_FOUND', 'the store holds no campaign yet', {
      hint: 'run `spectune tune -c spectune.yaml` first',
    });
  const trials = listTrials(db, c.id).map((t) => ({
    id: t.id,
    seq: t.seq,
    params: t.params,
    purpose: t.purpose,
    reason: t.reason,
    state: t.state,
    objective: t.objective,
    constraintsOk: t.constraintsOk,
    constraintNotes: t.constraintNotes,
    capacity: t.capacity,
    predictionWrong: t.predictionWrong,
    error: t.error,
    startedAt: t.startedAt,
    finishedAt: t.finishedAt,
    runs: listBenchRuns(db, t.id),
    verdicts: listVerdicts(db, t.id),
  }));
  return {
    campaign: {
      id: c.id,
      name: c.name,
      status: c.status,
      engine: c.engine,
      config: c.config,
      bestTrialId: c.bestTrialId,
      summary: c.summary,
      simulated: c.simulated,
      endState: c.endState,
      createdAt: c.createdAt,
      finishedAt: c.finishedAt,
    },
    trials,
    actions: readCampaignActions(db, c.id),
    generatedAt: now().toISOString(),
  };
}

// The report model of a campaign in an open store.
export function loadReportModel(db: Db, campaignId?: number): ReportModel {
  return buildReportModel(loadReportInput(db, campaignId));
}

// Markdown of a campaign in an open store (used by `spectune demo`).
export function renderCampaignMarkdown(db: Db, campaignId?: number): string {
  return renderMarkdown(loadReportModel(db, campaignId));
}

// Self-contained HTML of a campaign in an open store (used by `spectune demo`).
export function renderCampaignHtml(db: Db, campaignId?: number): string {
  return renderHtml(loadReportModel(db, campaignId));
}

// The store a report reads: --db when given, else the config's `store:` (relative to the config file, as tune resolves it), else ./spectune.db.
export async function resolveReportDb(opts: { db?: string; config?: string }): Promise<string> {
  if (opts.db !== undefined) return opts.db;
  if (opts.config === undefined) return './spectune.db';
  const { config } = await loadConfig(opts.config);
  return resolve(dirname(opts.config), config.store);
}

/** What `spectune report` was asked for. */
export interface ReportRequest {
  db: string;
  campaign?: number;
  html?: string;
  md?: string;
  /** Markdown for stdout when no file is asked for (default true; false under --json). */
  stdoutMarkdown?: boolean;
}

/** What it produced: Markdown for stdout when no file was asked for, and the files written. */
export interface ReportOutcome {
  campaignId: number;
  markdown: string | null;
  written: string[];
  /** The report model (what --json prints). */
  model: ReportModel;
}

// Open the store read-side, render, and write the requested files.
export async function runReport(req: ReportRequest): Promise<ReportOutcome> {
  if (req.db !== ':memory:' && !existsSync(req.db)) {
    throw new ToolError('E_FILE_NOT_FOUND', `no store at ${req.db}`, {
      hint: 'pass --db FILE (the store path of your spectune.yaml)',
    });
  }
  if (req.html) checkOutputFile('--html', req.html);
  if (req.md) checkOutputFile('--md', req.md);
  if (req.db !== ':memory:') assertSqliteFile('--db', req.db, true);
  const db = openStore(req.db);
  try {
    const model = loadReportModel(db, req.campaign);
    const written: string[] = [];
    if (req.md) {
      await writeFile(req.md, renderMarkdown(model));
      written.push(req.md);
    }
    if (req.html) {
      await writeFile(req.html, renderHtml(model));
      written.push(req.html);
    }
    const markdown = req.md || req.html || req.stdoutMarkdown === false ? null : renderMarkdown(model);
    return { campaignId: model.campaign.id, markdown, written, model };
  } finally {
    closeStore(db);
  }
}
