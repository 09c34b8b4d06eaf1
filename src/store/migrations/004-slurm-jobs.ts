// Migration 004: Slurm jobs of a campaign — one row per trial job by id, so a campaign killed mid-way finds its
// running jobs on --resume and ends them, and no job outlives its campaign.

/** SQL of migration 004 (never edit once released: add 005 instead). Additive: older stores open unchanged. */
export const SQL = `
CREATE TABLE slurm_jobs (
  id INTEGER PRIMARY KEY,
  campaign_id INTEGER NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
  trial_seq INTEGER NOT NULL,
  job_id TEXT NOT NULL,
  login TEXT NOT NULL,
  node TEXT,
  state TEXT NOT NULL,
  submitted_at TEXT NOT NULL,
  ended_at TEXT
);

CREATE INDEX slurm_jobs_campaign ON slurm_jobs (campaign_id);
`;
