// `spectune logs`: the journal of the current start, of a past trial (deploy version N), or since a time.
import { ToolError } from '../errors.js';
import type { Host } from '../host/types.js';
import { openHost } from '../host/open.js';
import { listVersions } from '../service/deploy.js';
import { renderShort, type JournalEntry } from '../service/journal.js';
import { readJournalSince } from '../service/systemd.js';
import { versionPath } from '../service/unit.js';
import type { RankTarget, ServiceTarget } from './service-target.js';

/** Without --since or a deploy history, show the last hour (long enough for a slow start and its crash). */
const DEFAULT_SINCE = '-1h';

/** Which part of the journal. */
export interface LogsRequest {
  /** Deploy version N (each `spectune apply` is one trial); "current" = the latest. */
  trial?: number;
  since?: string;
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
  const n = req.trial ?? (await listVersions(host, unit)).pop() ?? null;
  if (n === null) return { since: DEFAULT_SINCE };
  const start = await deployTime(host, unit, n);
  if (start === null) throw new ToolError('E_INPUT_UNUSABLE', `${host.name}: ${unit} has no trial ${n}`, { hint: 'trials are the numbered deploys of `spectune apply`; see `spectune status`' });
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

// Read the journal of the requested window of every rank (each rank's own trial N), merged in time order and
// rendered like `journalctl -o short` (the host name tells the ranks apart); entries carry their rank.
export async function readServiceLogs(target: ServiceTarget, req: LogsRequest): Promise<{ entries: (JournalEntry & { rank?: number })[]; text: string }> {
  const per = await Promise.all(target.ranks.map((r) => readRank(target, r, req)));
  if (per.length === 1) return { entries: per[0], text: renderShort(per[0]) };
  const entries = per.flatMap((es, i) => es.map((e) => ({ ...e, rank: target.ranks[i].rank }))).sort((a, b) => (a.realtimeUs ?? 0) - (b.realtimeUs ?? 0));
  return { entries, text: renderShort(entries) };
}
