// Slurm over the host layer (the login host, over SSH): every command an argv array; the script goes to sbatch on
// stdin. The only I/O of the domain: everything it reads goes through the pure parsers.
import { ToolError } from '../errors.js';
import { expectOk, type Host } from '../host/index.js';
import {
  parseSacct,
  parseScontrolConfig,
  parseScontrolJob,
  parseSinfoNodes,
  parseSqueue,
  SACCT_FIELDS,
  SQUEUE_FORMAT,
} from './parse.js';
import { parseSbatchOutput, sbatchArgv } from './script.js';
import type { SlurmClusterConfig, SlurmJob } from './types.js';

/** Slurm commands answer in well under this; a slower controller is reported, not waited on forever. */
const COMMAND_TIMEOUT_MS = 30_000;
/** States in which a job holds (or is about to hold) its node. */
export const LIVE_STATES: ReadonlySet<string> = new Set([
  'PENDING',
  'CONFIGURING',
  'RUNNING',
  'COMPLETING',
  'SUSPENDED',
  'REQUEUED',
  'RESIZING',
]);
/** Node states sinfo prints for a node a new job can start on at once. */
const FREE_NODE_STATES = new Set(['idle']);

/** The Slurm commands a campaign and `diagnose --slurm-job` use. */
export interface SlurmClient {
  readonly host: Host;
  readConfig(): Promise<SlurmClusterConfig>;
  /** Idle nodes of the partition (sinfo), in sinfo's order. */
  listFreeNodes(partition: string | null): Promise<string[]>;
  submit(script: string): Promise<string>;
  /** The job as scontrol knows it now, else as sacct recorded it; null when neither knows it. */
  readJob(jobId: string): Promise<SlurmJob | null>;
  /** sacct's record (null without accounting or when it has none yet). */
  readAccounting(jobId: string): Promise<SlurmJob | null>;
  /** Jobs of this user still queued or running with a name that starts with `prefix`. */
  listLiveJobs(prefix: string): Promise<{ jobId: string; state: string; nodes: string[] }[]>;
  /** Send a signal to the job's processes, the batch shell included (scancel --signal --full): the engine drains. */
  signal(jobId: string, sig: 'TERM' | 'INT' | 'KILL'): Promise<void>;
  /** scancel: SIGTERM, and SIGKILL after KillWait. */
  cancel(jobId: string): Promise<void>;
  /** The job's output file as the login host sees it (a shared file system), or null when it cannot be read. */
  readOutput(path: string): Promise<string | null>;
}

// Run one Slurm command on the login host; a missing command says Slurm's client tools are not installed there.
async function run(host: Host, argv: string[], input?: string): Promise<string> {
  const r = await host.exec(argv, { timeoutMs: COMMAND_TIMEOUT_MS, ...(input === undefined ? {} : { input }) });
  if (r.exitCode === 127) {
    throw new ToolError('E_REMOTE_COMMAND', `${host.name}: ${argv[0]} not found`, {
      hint: 'point target.slurm.login (or --host) at a Slurm login host with the client tools (sbatch, squeue, sacct, scontrol)',
    });
  }
  return expectOk(r, argv.slice(0, 2).join(' ')).stdout;
}

// The client over an open host.
export function createSlurmClient(host: Host): SlurmClient {
  const client: SlurmClient = {
    host,
    readConfig: async () => parseScontrolConfig(await run(host, ['scontrol', 'show', 'config'])),
    async listFreeNodes(partition) {
      const out = await run(host, [
        'sinfo',
        '--noheader',
        '--Node',
        '--format=%n|%t',
        ...(partition ? [`--partition=${partition}`] : []),
      ]);
      return [
        ...new Set(
          parseSinfoNodes(out)
            .filter((n) => FREE_NODE_STATES.has(n.state))
            .map((n) => n.node),
        ),
      ];
    },
    submit: async (script) => parseSbatchOutput(await run(host, sbatchArgv(), script)),
    async readJob(jobId) {
      const r = await host.exec(['scontrol', '--oneliner', 'show', 'job', jobId], { timeoutMs: COMMAND_TIMEOUT_MS });
      const live = r.exitCode === 0 ? parseScontrolJob(r.stdout) : null;
      if (live) return live;
      return client.readAccounting(jobId);
    },
    async readAccounting(jobId) {
      const r = await host.exec(
        ['sacct', '--jobs', jobId, '--parsable2', '--allocations', `--format=${SACCT_FIELDS.join(',')}`],
        { timeoutMs: COMMAND_TIMEOUT_MS },
      );
      if (r.exitCode !== 0) return null;
      return parseSacct(r.stdout).find((j) => j.jobId === jobId) ?? null;
    },
    async listLiveJobs(prefix) {
      const out = await run(host, ['squeue', '--noheader', '--me', `--format=${SQUEUE_FORMAT}|%j`]);
      return out
        .split('\n')
        .filter((l) => l.trim())
        .map((l) => ({ row: parseSqueue(l)[0], name: l.split('|')[4] ?? '' }))
        .filter((x) => x.name.startsWith(prefix))
        .map((x) => ({ jobId: x.row.jobId, state: x.row.state, nodes: x.row.nodes }));
    },
    async signal(jobId, sig) {
      await run(host, ['scancel', `--signal=${sig}`, '--full', jobId]);
    },
    async cancel(jobId) {
      await run(host, ['scancel', jobId]);
    },
    async readOutput(path) {
      try {
        return await host.readFile(path);
      } catch {
        return null;
      }
    },
  };
  return client;
}
