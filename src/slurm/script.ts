// Build a trial's sbatch script (pure): #SBATCH lines from the spec, the engine's command line exec'd on the node,
// or for a two-node job one srun that starts rank 0 and rank 1. Every value is checked or quoted; sbatch reads the
// script on stdin, so nothing goes through a remote shell but the script itself.
import { ToolError } from '../errors.js';
import { quoteArg } from '../host/index.js';
import type { TrialJobSpec } from './types.js';

/** Names Slurm accepts for jobs, partitions and nodes without surprises in a #SBATCH line. */
const SAFE_NAME = /^[A-Za-z0-9._:+-]{1,128}$/;
/** Slurm's memory syntax: a number with an optional K/M/G/T suffix. */
const SAFE_MEM = /^\d+[KMGT]?$/;
/** Output paths: no newline, no shell metacharacters Slurm would not expand anyway. */
const SAFE_PATH = /^[A-Za-z0-9._/%+-]{1,4096}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

// A bad value in the slurm section: one line naming the field and how to fix it.
function bad(field: string, value: unknown, want: string): ToolError {
  return new ToolError('E_CONFIG_INVALID', `target.slurm.${field}: ${JSON.stringify(value)} is not ${want}`, {
    hint: `set target.slurm.${field} to ${want}`,
  });
}

// Check every value that lands in a #SBATCH line (a newline or space there would change the job).
export function checkJobSpec(s: TrialJobSpec): void {
  if (!SAFE_NAME.test(s.name)) throw bad('jobName', s.name, 'a name of letters, digits and ._:+-');
  if (s.partition !== null && !SAFE_NAME.test(s.partition)) throw bad('partition', s.partition, 'a partition name');
  for (const n of [...(s.nodelist ? [s.nodelist] : []), ...s.exclude])
    if (!SAFE_NAME.test(n)) throw bad('nodes', n, 'a node name');
  if (!SAFE_MEM.test(s.mem)) throw bad('mem', s.mem, 'a memory request such as "4G" or "800M"');
  if (!Number.isInteger(s.timeLimitMin) || s.timeLimitMin < 1)
    throw bad('timeLimit', s.timeLimitMin, 'a whole number of minutes >= 1');
  if (s.gpusPerNode !== null && (!Number.isInteger(s.gpusPerNode) || s.gpusPerNode < 1))
    throw bad('gpusPerTrial', s.gpusPerNode, 'a whole number >= 1');
  if (s.cpusPerTask !== null && (!Number.isInteger(s.cpusPerTask) || s.cpusPerTask < 1))
    throw bad('cpusPerTask', s.cpusPerTask, 'a whole number >= 1');
  if (!SAFE_PATH.test(s.output)) throw bad('output', s.output, 'a path of letters, digits and ._/%+- (%j = job id)');
  if (s.chdir !== null && !SAFE_PATH.test(s.chdir)) throw bad('chdir', s.chdir, 'a directory path');
  if (!Number.isInteger(s.port) || s.port < 1 || s.port > 65535) throw bad('port', s.port, 'a TCP port');
  if (!s.command.trim() || s.command.includes('\n'))
    throw bad('command', s.command, 'the engine command line on one line');
  if (s.nodes === 2 && (!s.rank1Command || s.rank1Command.includes('\n')))
    throw bad('rank1Command', s.rank1Command, 'the rank-1 command line on one line (a two-node job needs one)');
  for (const k of Object.keys(s.env)) if (!ENV_NAME.test(k)) throw bad('env', k, 'an environment variable name');
}

// The #SBATCH header lines of a spec.
function headerLines(s: TrialJobSpec): string[] {
  const opt = (k: string, v: string | number | null) => (v === null ? [] : [`#SBATCH --${k}=${v}`]);
  return [
    ...opt('job-name', s.name),
    ...opt('partition', s.partition),
    ...opt('nodes', s.nodes),
    ...opt('ntasks-per-node', 1),
    ...opt('nodelist', s.nodelist),
    ...opt('exclude', s.exclude.length ? s.exclude.join(',') : null),
    ...opt('gpus-per-node', s.gpusPerNode),
    ...opt('cpus-per-task', s.cpusPerTask),
    ...opt('mem', s.mem),
    ...opt('time', s.timeLimitMin),
    ...opt('output', s.output),
    ...opt('chdir', s.chdir),
  ];
}

// The body: environment, a marker line spectune reads back (node and port), then the engine (exec, so Slurm's
// signals reach it directly) or one srun over both nodes for a two-node job.
function bodyLines(s: TrialJobSpec): string[] {
  const env = [
    `export SPECTUNE_PORT=${s.port}`,
    ...Object.entries(s.env).map(([k, v]) => `export ${k}=${quoteArg(v)}`),
  ];
  if (s.nodes === 1) {
    return [
      ...env,
      'echo "spectune: job $SLURM_JOB_ID rank 0 on $(hostname) port $SPECTUNE_PORT"',
      `exec ${s.command}`,
    ];
  }
  const ranks = `if [ "$SLURM_PROCID" = 0 ]; then ${s.command}; else ${s.rank1Command}; fi`;
  const task = `echo "spectune: job $SLURM_JOB_ID rank $SLURM_PROCID on $(hostname) port $SPECTUNE_PORT"; ${ranks}`;
  return [
    ...env,
    'SPECTUNE_RANK0=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)',
    'export SPECTUNE_RANK0',
    `exec srun --nodes=2 --ntasks=2 --ntasks-per-node=1 --kill-on-bad-exit=1 bash -c ${quoteArg(task)}`,
  ];
}

// The full script sbatch reads on stdin.
export function buildSbatchScript(s: TrialJobSpec): string {
  checkJobSpec(s);
  return ['#!/bin/bash', ...headerLines(s), '# written by spectune: one tuning trial', ...bodyLines(s), ''].join('\n');
}

// The submit command (the script goes on stdin): --parsable prints "JOBID" or "JOBID;CLUSTER".
export function sbatchArgv(): string[] {
  return ['sbatch', '--parsable'];
}

// The job id out of `sbatch --parsable` output.
export function parseSbatchOutput(stdout: string): string {
  const m = /^(\d+)(?:_\d+)?(?:;\S+)?\s*$/m.exec(stdout.trim());
  if (!m)
    throw new ToolError(
      'E_REMOTE_COMMAND',
      `sbatch printed no job id: ${JSON.stringify(stdout.trim().slice(0, 200))}`,
      { hint: 'run the printed sbatch script by hand on the login host to see why' },
    );
  return m[1];
}
