// Run segments of a campaign: each run of the tuner (first start or a resume) and the last time it was seen alive.
import type { Db } from './db.js';
import { isoNow } from './json.js';

/** One run of the tuner on a campaign (ISO-8601 times). */
export interface RunSegment {
  id: number;
  campaignId: number;
  startedAt: string;
  lastActiveAt: string;
}

// Open a segment when the tuner starts or resumes a campaign.
export function recordRunStart(db: Db, campaignId: number, ts?: string): RunSegment {
  const t = isoNow(ts);
  const info = db
    .prepare('INSERT INTO run_segments (campaign_id, started_at, last_active_at) VALUES (?, ?, ?)')
    .run(campaignId, t, t);
  return { id: Number(info.lastInsertRowid), campaignId, startedAt: t, lastActiveAt: t };
}

// Extend a segment to now: a SIGKILL loses at most the time since the last touch.
export function touchRun(db: Db, id: number, ts?: string): void {
  db.prepare('UPDATE run_segments SET last_active_at = ? WHERE id = ?').run(isoNow(ts), id);
}

// The segments of a campaign, oldest first.
export function listRunSegments(db: Db, campaignId: number): RunSegment[] {
  const rows = db
    .prepare('SELECT id, campaign_id, started_at, last_active_at FROM run_segments WHERE campaign_id = ? ORDER BY id')
    .all(campaignId) as { id: number; campaign_id: number; started_at: string; last_active_at: string }[];
  return rows.map((r) => ({
    id: r.id,
    campaignId: r.campaign_id,
    startedAt: r.started_at,
    lastActiveAt: r.last_active_at,
  }));
}
