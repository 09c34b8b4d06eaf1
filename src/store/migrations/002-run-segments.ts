// Migration 002: run segments — one row per run of `spectune tune` on a campaign, from start (or resume) to its last
// sign of life, so the hours budget counts the time the tuner ran and not the nights it was interrupted.

/** SQL of migration 002 (never edit once released: add 003 instead). Additive: stores of version 1 open unchanged. */
export const SQL = `
CREATE TABLE run_segments (
  id INTEGER PRIMARY KEY,
  campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
  started_at TEXT NOT NULL,
  last_active_at TEXT NOT NULL
);

CREATE INDEX run_segments_campaign ON run_segments (campaign_id);
`;
