// Slurm jobs of a campaign by id (migration 004): written at submit, updated when the job's node is known and when it ends.
import type { Db } from './db.js';
import { isoNow } from './json.js';

/** One trial job as stored. */
export interface SlurmJobRow {
  campaignId: number;
  /** The trial's seq (1-based trial number). */
  trialSeq: number;
  jobId: string;
  /** The login host the job was submitted on. */
  login: string;
  node: string | null;
  /** 'submitted', 'running', or the final Slurm state once ended. */
  state: string;
  submittedAt: string;
  endedAt: string | null;
}

// Record a job right after sbatch answered.
export function recordSlurmJob(
  db: Db,
  r: { campaignId: number; trialSeq: number; jobId: string; login: string; ts?: string },
): void {
  db.prepare(
    'INSERT INTO slurm_jobs (campaign_id, trial_seq, job_id, login, node, state, submitted_at) VALUES (?, ?, ?, ?, NULL, ?, ?)',
  ).run(r.campaignId, r.trialSeq, r.jobId, r.login, 'submitted', isoNow(r.ts));
}

// Update a job's node or state; `ended` stamps ended_at.
export function updateSlurmJob(
  db: Db,
  campaignId: number,
  jobId: string,
  u: { node?: string | null; state?: string; ended?: boolean; ts?: string },
): void {
  const row = db
    .prepare('SELECT node, state FROM slurm_jobs WHERE campaign_id = ? AND job_id = ?')
    .get(campaignId, jobId) as { node: string | null; state: string } | undefined;
  if (!row) return;
  db.prepare(
    'UPDATE slurm_jobs SET node = ?, state = ?, ended_at = COALESCE(ended_at, ?) WHERE campaign_id = ? AND job_id = ?',
  ).run(
    u.node === undefined ? row.node : u.node,
    u.state ?? row.state,
    u.ended ? isoNow(u.ts) : null,
    campaignId,
    jobId,
  );
}

// The jobs of a campaign, oldest first; `open` = not yet recorded as ended.
export function listSlurmJobs(db: Db, campaignId: number, o: { open?: boolean } = {}): SlurmJobRow[] {
  const rows = db
    .prepare(`SELECT * FROM slurm_jobs WHERE campaign_id = ?${o.open ? ' AND ended_at IS NULL' : ''} ORDER BY id`)
    .all(campaignId) as {
    campaign_id: number;
    trial_seq: number;
    job_id: string;
    login: string;
    node: string | null;
    state: string;
    submitted_at: string;
    ended_at: string | null;
  }[];
  return rows.map((r) => ({
    campaignId: r.campaign_id,
    trialSeq: r.trial_seq,
    jobId: r.job_id,
    login: r.login,
    node: r.node,
    state: r.state,
    submittedAt: r.submitted_at,
    endedAt: r.ended_at,
  }));
}
