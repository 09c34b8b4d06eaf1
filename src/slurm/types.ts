// Shared types of the Slurm domain: job states, what sacct/scontrol say about a job, and what one trial job asks for.

/** Slurm job states as sacct and scontrol print them (the base word; "CANCELLED by 0" is CANCELLED). */
export type SlurmState =
  | 'PENDING'
  | 'CONFIGURING'
  | 'RUNNING'
  | 'COMPLETING'
  | 'SUSPENDED'
  | 'REQUEUED'
  | 'RESIZING'
  | 'COMPLETED'
  | 'FAILED'
  | 'CANCELLED'
  | 'TIMEOUT'
  | 'OUT_OF_MEMORY'
  | 'NODE_FAIL'
  | 'PREEMPTED'
  | 'BOOT_FAIL'
  | 'DEADLINE'
  | 'UNKNOWN';

/** A job's exit as Slurm writes it, "code:signal" (0:9 = killed by SIGKILL). */
export interface SlurmExit {
  code: number;
  signal: number;
}

/** One job as sacct or scontrol reports it (the allocation's own line, not its steps). */
export interface SlurmJob {
  jobId: string;
  name: string;
  state: SlurmState;
  /** The state word as printed, e.g. "CANCELLED by 0". */
  stateText: string;
  exit: SlurmExit | null;
  /** The allocated nodes, expanded ("n[1-2]" becomes ["n1", "n2"]); empty while pending. */
  nodes: string[];
  /** Why it waits or ended (scontrol's Reason), or null. */
  reason: string | null;
  /** The job's output file (scontrol StdOut), when known. */
  stdout: string | null;
  start: string | null;
  end: string | null;
  /** When the batch step's processes were gone (sacct's `ID.batch` End; null from scontrol, whose EndTime is the cancel). */
  stepEnd: string | null;
}

/** The cluster settings a campaign needs from `scontrol show config`. */
export interface SlurmClusterConfig {
  /** Seconds between the SIGTERM of a cancel and the SIGKILL. */
  killWaitSec: number;
  /** Whether accounting is on (sacct answers); without it scontrol is the record while MinJobAge lasts. */
  accounting: boolean;
  clusterName: string | null;
}

/** What one trial job asks the cluster for and runs. */
export interface TrialJobSpec {
  /** Job name (the campaign's name plus the trial number). */
  name: string;
  partition: string | null;
  /** Nodes of the job: 1, or 2 for a model split across nodes (rank 0 and rank 1 via srun). */
  nodes: 1 | 2;
  /** Pin the job to this node (parallel trials: one per node; a winner's confirmation elsewhere). */
  nodelist: string | null;
  /** Nodes the job must not land on. */
  exclude: string[];
  gpusPerNode: number | null;
  cpusPerTask: number | null;
  /** Memory per node, as Slurm reads it ("4G", "800M"): every trial asks explicitly (no request = the whole node). */
  mem: string;
  /** Wall-time limit in minutes. */
  timeLimitMin: number;
  /** The engine's command line (shell words, already patched with the trial's settings). */
  command: string;
  /** A rank-1 command for a two-node job; it reads rank 0's node name from $SPECTUNE_RANK0. */
  rank1Command: string | null;
  /** The port the engine listens on, exported to the command as SPECTUNE_PORT. */
  port: number;
  /** Output file pattern (`%j` = job id); on a file system the login host reads. */
  output: string;
  /** Working directory of the job, or null for sbatch's default. */
  chdir: string | null;
  /** Extra environment for the engine (names checked; values quoted). */
  env: Record<string, string>;
}
