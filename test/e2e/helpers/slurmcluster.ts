// Where the real Slurm test cluster is: read slurm.json written by scripts/testhost/slurm-up.sh.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isAlive } from './testhosts.js';

/** One Slurm node (a test host running slurmd; the first is also the login/controller host). */
export interface SlurmNode {
  /** Node name in slurm.conf and ssh_config alias (sl1, sl2, ...). */
  name: string;
  /** The node's address on the cluster bridge, reachable from this machine (a job's server listens here). */
  ip: string;
  /** PID of the node's systemd-nspawn launcher on this machine. */
  pid: number;
}

/** The booted cluster (see scripts/testhost/slurm-up.sh and scripts/testhost/README.md). */
export interface SlurmCluster {
  /** ssh alias of the login host, where sbatch/squeue/scontrol/sacct/scancel run. */
  login: string;
  /** ssh config with a `Host slN` block per node. */
  sshConfig: string;
  sshKey: string;
  knownHosts: string;
  partition: string;
  cluster: string;
  /** Seconds between a job's SIGTERM and SIGKILL (slurm.conf KillWait). */
  killWait: number;
  /** Seconds `scontrol show job` keeps a finished job (slurm.conf MinJobAge). */
  minJobAge: number;
  nodeMemMb: number;
  nodeCpus: number;
  /** How memory requests are enforced: cgroup (OUT_OF_MEMORY) or overmemorykill (FAILED). */
  memEnforce: 'cgroup' | 'overmemorykill';
  /** This machine's address on the cluster bridge (reachable from jobs). */
  hostIp: string;
  /** A directory shared by every node (like a cluster's shared home), and where it is on this machine. */
  shared: string;
  sharedLocal: string;
  nodes: SlurmNode[];
}

const DEFAULT_ENV = '/var/lib/spectune-testhost/slurm.env';
const HOW_TO_START =
  'boot it with `sudo bash scripts/testhost/slurm-up.sh` (or run the whole suite with `sudo bash scripts/test-all.sh`)';

// slurm.json lives next to slurm.env, whose path may be overridden with SPECTUNE_SLURM_ENV.
export function slurmJsonPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(dirname(env.SPECTUNE_SLURM_ENV || DEFAULT_ENV), 'slurm.json');
}

// The booted Slurm cluster; throws a clear, actionable error when it is not up.
export function loadSlurmCluster(env: NodeJS.ProcessEnv = process.env): SlurmCluster {
  const path = slurmJsonPath(env);
  if (!existsSync(path)) throw new Error(`the spectune Slurm test cluster is not up (no ${path}): ${HOW_TO_START}`);
  const cluster = JSON.parse(readFileSync(path, 'utf8')) as SlurmCluster;
  if (!cluster.nodes?.length) throw new Error(`${path} lists no nodes: ${HOW_TO_START}`);
  const dead = cluster.nodes.filter((n) => !isAlive(n.pid)).map((n) => n.name);
  if (dead.length)
    throw new Error(`Slurm test nodes ${dead.join(', ')} are not running (stale ${path}): ${HOW_TO_START}`);
  return cluster;
}
