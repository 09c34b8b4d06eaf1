// `spectune logs`: the journal of the current start, of a campaign's trial N (as the report numbers it), of deploy
// version N, or since a time.
import { existsSync } from 'node:fs';
import { ToolError } from '../errors.js';
import type { Host } from '../host/types.js';
import { openHost } from '../host/open.js';
import { listVersions } from '../service/deploy.js';
import { renderShort, type JournalEntry } from '../service/journal.js';
import { readJournalSince } from '../service/systemd.js';
import { versionPath } from '../service/unit.js';
import { closeStore, getCampaign, latestStartedCampaign, listTrials, openStore } from '../store/index.js';
import type { RankTarget, ServiceTarget } from './service-target.js';

/** Without --since or a deploy history, show the last hour (long enough for a slow start and its crash). */
const DEFAULT_SINCE = '-1h';

/** Slack around a trial's stored start and end: the store is stamped by this machine's clock, the journal by the host's. */
const TRIAL_SLACK_S = 5;

/** Which part of the journal. */
export interface LogsRequest {
  /** Trial N of a campaign (1-based, as tune and the report number them): the journal from its start to its end. */
  trial?: number;
  /** The campaign of --trial (default: the latest that ran a trial). */
  campaign?: number;
  /** The store --trial reads (the config's store:). */
  db?: string;
  /** Deploy version N (the numbered drop-ins of the host; default: the latest). */
  version?: number;
  since?: string;
}

// The journal window of trial N of a campaign, from the store: [start - slack, end + slack] (no end while it runs).
export function trialWindow(dbPath: string, trial: number, campaign?: number): { since: string; until?: string } {
  if (!existsSync(dbPath))
    throw new ToolError('E_FILE_NOT_FOUND', `--trial ${trial}: no campaign store at ${dbPath}`, {
      hint: 'pass -c spectune.yaml (its store:) or --db FILE; --version N shows deploy version N instead',
    });
  const db = openStore(dbPath);
  try {
    const c = campaign === undefined ? latestStartedCampaign(db) : getCampaign(db, campaign);
    if (!c)
      throw new ToolError(
        'E_CAMPAIGN_NOT_FOUND',
        `--trial ${trial}: the store ${dbPath} holds no campaign with a trial`,
        { hint: 'run spectune tune first, or --version N for deploy version N' },
      );
    const all = listTrials(db, c.id);
    const t = all.find((x) => x.seq === trial);
    if (!t)
      throw new ToolError('E_INPUT_UNUSABLE', `campaign ${c.id} has no trial ${trial}`, {
        hint: 'trials are numbered as `spectune report` shows them',
      });
    const sec = (iso: string) => Math.floor(Date.parse(iso) / 1000);
    // The slack never reaches into the trial before or after (a fast campaign's trials are seconds apart).
    const prev = all.find((x) => x.seq === trial - 1)?.finishedAt;
    const next = all.find((x) => x.seq === trial + 1)?.startedAt;
    const since = Math.max(sec(t.startedAt) - TRIAL_SLACK_S, prev ? sec(prev) : -Infinity);
    const until = t.finishedAt
      ? Math.min(sec(t.finishedAt) + TRIAL_SLACK_S, next ? Math.ceil(Date.parse(next) / 1000) : Infinity)
      : null;
    return { since: `@${since}`, ...(until === null ? {} : { until: `@${until}` }) };
  } finally {
    closeStore(db);
  }
}

// When deploy version N was installed (the kept copy's mtime, epoch seconds), or null.
async function deployTime(host: Host, unit: string, version: number): Promise<number | null> {
  const r = await host.exec(['stat', '-c', '%Y', '--', versionPath(unit, version)], { timeoutMs: 30_000 });
  const n = Number(r.stdout.trim());
  return r.exitCode === 0 && Number.isFinite(n) ? n : null;
}

// The journal window of a request: [since, until).
async function window(host: Host, unit: string, req: LogsRequest): Promise<{ since: string; until?: string }> {
  if (req.since) return { since: req.since };
  if (req.trial !== undefined) return trialWindow(req.db ?? './spectune.db', req.trial, req.campaign);
  const n = req.version ?? (await listVersions(host, unit)).pop() ?? null;
  if (n === null) return { since: DEFAULT_SINCE };
  const start = await deployTime(host, unit, n);
  if (start === null)
    throw new ToolError('E_INPUT_UNUSABLE', `${host.name}: ${unit} has no deploy version ${n}`, {
      hint: 'see `spectune history` for the kept versions',
    });
  const end = await deployTime(host, unit, n + 1);
  return { since: `@${start}`, ...(end === null ? {} : { until: `@${end}` }) };
}

// Read one rank's journal of the requested window.
async function readRank(target: ServiceTarget, r: RankTarget, req: LogsRequest): Promise<JournalEntry[]> {
  const host = await openHost({ target: r.target, sshConfig: target.sshConfig, sudo: target.sudo });
  try {
    const w = await window(host, r.unit, req);
    return await readJournalSince(host, r.unit, w.since, w.until);
  } finally {
    await host.close();
  }
}

// Read the journal of the requested window of every rank (each rank's own deploy version N), merged in time order and
// rendered like `journalctl -o short` (the host name tells the ranks apart); entries carry their rank.
export async function readServiceLogs(
  target: ServiceTarget,
  req: LogsRequest,
): Promise<{ entries: (JournalEntry & { rank?: number })[]; text: string }> {
  const per = await Promise.all(target.ranks.map((r) => readRank(target, r, req)));
  if (per.length === 1) return { entries: per[0], text: renderShort(per[0]) };
  const entries = per
    .flatMap((es, i) => es.map((e) => ({ ...e, rank: target.ranks[i].rank })))
    .sort((a, b) => (a.realtimeUs ?? 0) - (b.realtimeUs ?? 0));
  return { entries, text: renderShort(entries) };
}
