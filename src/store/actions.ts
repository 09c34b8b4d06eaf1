// The action log (who stopped/started what, and why) and the optional event log of a campaign.
import type { ActionRecord } from '../diagnose/index.js';
import type { SpectuneEvent } from '../tune/events.js';
import type { Db } from './db.js';
import { fromJson, toJson, toText } from './json.js';

// Log one service action; diagnose reads these to attribute a SIGTERM to spectune instead of calling it a crash.
export function recordAction(
  db: Db,
  a: ActionRecord,
  ref: { campaignId?: number | null; trialId?: number | null } = {},
): void {
  db.prepare(
    'INSERT INTO actions (campaign_id, trial_id, ts, action, unit, by, host, why) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  ).run(
    ref.campaignId ?? null,
    ref.trialId ?? null,
    a.ts,
    toText(a.action),
    toText(a.unit),
    toText(a.by),
    toText(a.host ?? null),
    toText(a.why ?? null),
  );
}

// Actions in time order, optionally for one campaign and/or since a time.
export function listActions(
  db: Db,
  filter: { campaignId?: number; since?: string } = {},
): (ActionRecord & { trialId: number | null })[] {
  const rows = db
    .prepare(`SELECT * FROM actions WHERE (? IS NULL OR campaign_id = ?) AND (? IS NULL OR ts >= ?) ORDER BY ts, id`)
    .all(filter.campaignId ?? null, filter.campaignId ?? null, filter.since ?? null, filter.since ?? null) as Record<
    string,
    string | number | null
  >[];
  return rows.map((r) => ({
    ts: r.ts as string,
    action: r.action as string,
    unit: r.unit as string,
    by: r.by as string,
    trialId: r.trial_id as number | null,
    ...(r.host !== null ? { host: r.host as string } : {}),
    ...(r.why !== null ? { why: r.why as string } : {}),
  }));
}

// Keep a progress event (for the timeline of the report and for live UIs that attach late).
export function recordEvent(db: Db, campaignId: number | null, e: SpectuneEvent): void {
  db.prepare('INSERT INTO events (campaign_id, ts, type, event_json) VALUES (?, ?, ?, ?)').run(
    campaignId,
    e.ts,
    e.type,
    toJson(e),
  );
}

// Events of a campaign in time order.
export function listEvents(db: Db, campaignId: number): SpectuneEvent[] {
  const rows = db.prepare('SELECT event_json FROM events WHERE campaign_id = ? ORDER BY ts, id').all(campaignId) as {
    event_json: string;
  }[];
  return rows.map((r) => fromJson<SpectuneEvent>(r.event_json)!);
}
