// What a campaign run ends with, whatever runs its trials (a systemd unit, the process manager, Slurm jobs).
import type { ConcurrencyBest } from './per-concurrency.js';
import type { TrialRecord } from './types.js';

/** What a campaign run ends with (printed as JSON on stdout with --json). */
export interface CampaignResult {
  campaignId: number;
  status: 'done' | 'interrupted' | 'no-winner';
  best: TrialRecord | null;
  baseline: TrialRecord | null;
  trials: TrialRecord[];
  /** The drop-in / ExecStart now in force (Slurm: the winner's sbatch script), or null when unchanged or unknown. */
  deployed: string | null;
  /** Service restarts the campaign cost: one per config change, one per rollback, one to land on the winner. */
  restarts: number;
  /** Why the winner won although another config measured higher (tied within noise, safer), else null. */
  winnerNote: string | null;
  /** The best measured config at each concurrency level (by output tok/s): where speculation pays depends on load. */
  bestPerConcurrency: ConcurrencyBest[];
  summary: string;
  /** The objective's unit ("tok/s per request"), for summaries that show the figures. */
  objectiveUnit?: string;
}
