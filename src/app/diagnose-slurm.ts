// `spectune diagnose --slurm-job ID [--host LOGIN]`: any job's verdict from sacct + scontrol + its output file,
// read on the login host (this machine without --host).
import type { Diagnosis } from '../diagnose/index.js';
import type { EngineName } from '../engines/types.js';
import { ToolError } from '../errors.js';
import { openHost } from '../host/index.js';
import { createSlurmClient, readJobVerdict } from '../slurm/index.js';

/** Inputs of a job diagnosis. */
export interface SlurmDiagnoseInput {
  jobId: string;
  host?: string;
  sshConfig?: string;
  engine?: EngineName;
  /** The job's output file when scontrol no longer knows it (after MinJobAge); %j = job id. */
  output?: string;
}

// Read the job's record and output on the login host and diagnose it.
export async function runSlurmDiagnose(input: SlurmDiagnoseInput): Promise<Diagnosis> {
  if (!/^\d+$/.test(input.jobId))
    throw new ToolError('E_USAGE', `--slurm-job: expected a numeric job id, got "${input.jobId}"`, {
      hint: 'e.g. spectune diagnose --slurm-job 1234 --host user@login',
    });
  const host = await openHost({ target: input.host, sshConfig: input.sshConfig });
  try {
    const client = createSlurmClient(host);
    const cluster = await client.readConfig().catch(() => null);
    const r = await readJobVerdict(client, input.jobId, {
      killWaitSec: cluster?.killWaitSec ?? null,
      cancelledByUs: null,
      engine: input.engine,
      outputPath: input.output,
    });
    if (!r) {
      throw new ToolError('E_INPUT_UNUSABLE', `${host.name}: job ${input.jobId} is unknown to scontrol and sacct`, {
        hint: 'check the id and the login host (--host); without slurmdbd, scontrol forgets a job MinJobAge seconds after it ends',
      });
    }
    return r.diagnosis;
  } finally {
    await host.close().catch(() => {});
  }
}
