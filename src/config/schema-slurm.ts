// The `target.slurm` section of spectune.yaml (manager: slurm): how each trial becomes a Slurm job.
import { z } from 'zod';

const quantity = z.union([z.number(), z.string()]);

// biome-ignore lint/complexity/noUselessEscapeInRegex: in the JSON schema `\[` stays valid under the v flag
const LOGIN_SPEC = /^(?:[A-Za-z0-9._-]+@)?[A-Za-z0-9._:\[\]-]+$/;

/** One trial = one job: what it asks the cluster for and the engine command line it runs. */
export const slurmSchema = z.strictObject({
  /** SSH destination of the login host (sbatch, squeue, sacct, scontrol); default target.hosts[0].host. */
  login: z
    .string()
    .regex(LOGIN_SPEC, 'expected "user@host"')
    .optional()
    .describe('login host "user@host" (default: target.hosts[0].host)'),
  /** Partition of the trial jobs (default: the cluster's default partition). */
  partition: z.string().min(1).optional().describe('partition of the trial jobs'),
  /** Nodes per trial: 1, or 2 for a model split across nodes (rank 0 and rank 1 via srun). */
  nodes: z
    .union([z.literal(1), z.literal(2)])
    .default(1)
    .describe('nodes per trial: 1, or 2 (rank 0 and rank 1 via srun)'),
  /** GPUs per node of a trial (--gpus-per-node), where the cluster has them. */
  gpusPerTrial: z.number().int().min(1).optional().describe('GPUs per node of a trial (--gpus-per-node)'),
  /** CPUs of the engine task (--cpus-per-task). */
  cpusPerTask: z.number().int().min(1).optional().describe('CPUs per task (--cpus-per-task)'),
  /** Memory per node, as sbatch --mem reads it ("4G"); required: without it a job takes the node's whole memory. */
  mem: z
    .string()
    .regex(/^\d+[KMGT]?$/, 'expected a memory request such as "4G"')
    .describe('memory per node (--mem), e.g. "4G"'),
  /** Wall-time limit of a trial job ("30m", "2h"). */
  timeLimit: quantity.default('30m').describe('time limit of a trial job, e.g. "30m"'),
  /** The engine's command line (the tuned flags are patched in); it listens on $SPECTUNE_PORT (endpoint's port). */
  command: z.string().min(1).describe('engine command line; listens on $SPECTUNE_PORT'),
  /** Rank 1's command line of a two-node trial; rank 0's node is in $SPECTUNE_RANK0. */
  rank1Command: z
    .string()
    .min(1)
    .optional()
    .describe('rank-1 command line of a two-node trial ($SPECTUNE_RANK0 = rank 0 node)'),
  /** Job output file (%j = job id), on a file system the login host shares with the nodes. */
  output: z.string().default('spectune-%j.out').describe('job output file (%j = job id), shared with the login host'),
  /** Working directory of the jobs. */
  chdir: z.string().optional().describe('working directory of the jobs'),
  /** Trials at once (one per free node); default: every free node of the partition. */
  parallel: z.number().int().min(1).optional().describe('trials at once, one per node (default: all free nodes)'),
  /** Address spectune reaches each node at, when node names do not resolve from where spectune runs. */
  nodeAddresses: z.record(z.string(), z.string()).optional().describe('node name -> address spectune reaches it at'),
  /** Time the engine needs to drain on SIGTERM (spectune waits that long before scancel when KillWait is shorter). */
  drain: quantity.default('30s').describe('time the engine needs to drain on SIGTERM'),
  /** Longest wait for a trial job to start running (queue time). */
  startTimeout: quantity.default('10m').describe('longest wait for a job to start'),
  /** Extra environment of the engine. */
  env: z.record(z.string(), z.string()).optional().describe('extra environment of the engine'),
  /** Confirm the winner on a node other than the one it won on (default true). */
  confirmElsewhere: z.boolean().default(true).describe('confirm the winner on another node'),
});

/** The normalised slurm section. */
export interface SlurmTargetConfig {
  login: string | null;
  partition: string | null;
  nodes: 1 | 2;
  gpusPerTrial: number | null;
  cpusPerTask: number | null;
  mem: string;
  timeLimitMin: number;
  command: string;
  rank1Command: string | null;
  output: string;
  chdir: string | null;
  parallel: number | null;
  nodeAddresses: Record<string, string>;
  drainSec: number;
  startTimeoutMs: number;
  env: Record<string, string>;
  confirmElsewhere: boolean;
}
