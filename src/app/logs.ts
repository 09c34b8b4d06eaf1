// `spectune logs`: the journal of the current start, of a past trial (deploy version N), or since a time.
import { ToolError } from '../errors.js';
import type { Host } from '../host/types.js';
import { openHost } from '../host/open.js';
import { listVersions } from '../service/deploy.js';
import { renderShort, type JournalEntry } from '../service/journal.js';
import { readJournalSince } from '../service/systemd.js';
import { versionPath } from '../service/unit.js';
import type { ServiceTarget } from './service-target.js';

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

// Read the journal of the requested window, rendered like `journalctl -o short`.
export async function readServiceLogs(target: ServiceTarget, req: LogsRequest): Promise<{ entries: JournalEntry[]; text: string }> {
  const host = await openHost({ target: target.target, sshConfig: target.sshConfig, sudo: target.sudo });
  try {
    const w = await window(host, target.unit, req);
    const entries = await readJournalSince(host, target.unit, w.since, w.until);
    return { entries, text: renderShort(entries) };
  } finally {
    await host.close();
  }
}
