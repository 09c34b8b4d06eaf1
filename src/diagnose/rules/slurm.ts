// Slurm family (22.05, slurmstepd's own lines in a job's output file): time limit, memory limit, cgroup OOM,
// cancel, preemption, node failure. The job-level verdict (src/slurm/verdict.ts) adds sacct's state to these.
import type { DiagnosisRule } from '../types.js';

/** "slurmstepd-NODE: error: *** JOB 5 ON NODE CANCELLED AT 2026-12-01T14:04:42 DUE TO TIME LIMIT ***". */
const CANCEL = String.raw`\*\*\* (?:JOB|STEP) (?<job_id>[\d.]+) ON (?<node>\S+) CANCELLED AT (?<cancelled_at>\S+)`;

/** Rules read from Slurm's own lines, identical for every engine. */
export const SLURM_RULES: DiagnosisRule[] = [
  {
    id: 'slurm.time_limit',
    class: 'external_kill',
    confidence: 'high',
    detail: 'slurm_time_limit',
    priority: 2,
    title: 'Slurm ended the job at its time limit',
    patterns: [new RegExp(`${CANCEL} DUE TO TIME LIMIT \\*\\*\\*`)],
    remediation: [
      { text: 'the job ran past its --time: raise the time limit (target.slurm.timeLimit) or shorten the trial' },
    ],
  },
  {
    id: 'slurm.preempted',
    class: 'external_kill',
    confidence: 'high',
    detail: 'slurm_preemption',
    priority: 2,
    title: 'Slurm preempted the job for a higher-priority one',
    patterns: [new RegExp(`${CANCEL} DUE TO PREEMPTION \\*\\*\\*`)],
    remediation: [
      { text: 'run trials in a partition or QOS that is not preempted, or accept redoing preempted trials' },
    ],
  },
  {
    id: 'slurm.node_fail',
    class: 'external_kill',
    confidence: 'high',
    detail: 'slurm_node_fail',
    priority: 2,
    title: "The job's node failed (Slurm cancelled the job)",
    patterns: [new RegExp(`${CANCEL} DUE TO NODE (?:\\S+ )?FAIL(?:URE)?`)],
    remediation: [
      {
        text: "the node went down, not the engine: check `sinfo -R` and slurmctld's log, then redo the trial on another node",
      },
    ],
  },
  {
    id: 'slurm.cancelled',
    class: 'external_kill',
    confidence: 'medium',
    detail: 'slurm_cancel',
    fatal: false,
    title: 'The job was cancelled (scancel)',
    patterns: [new RegExp(`${CANCEL} \\*\\*\\*`)],
    remediation: [
      {
        text: 'someone ran scancel: if the engine was still draining, a SIGKILL followed after KillWait (see sacct ExitCode 0:9)',
      },
    ],
  },
  {
    id: 'slurm.mem_limit',
    class: 'host_oom_kill',
    confidence: 'high',
    detail: 'slurm_mem_limit',
    title: 'Slurm killed the job for exceeding its memory request',
    patterns: [
      /StepId=(?<step>\S+) exceeded memory limit \((?<used_bytes>\d+) > (?<limit_bytes>\d+)\), being killed/,
      /Exceeded job memory limit/,
      /Exceeded step memory limit/,
    ],
    remediation: [
      {
        text: 'the job used more host RAM than it asked for: raise the memory request (target.slurm.mem, sbatch --mem)',
        direction: 'increase',
      },
      { text: "or lower the engine's host-RAM use (fewer CPU-side buffers, smaller batch)" },
    ],
  },
  {
    id: 'slurm.oom_kill_event',
    class: 'host_oom_kill',
    confidence: 'high',
    detail: 'slurm_cgroup_oom',
    title: "The job's memory cgroup ran out and the kernel OOM killer killed a process",
    patterns: [
      /Detected (?<oom_events>\d+) oom[_-]kill events? in (?<step>\S+?)\.? Some of (?:the step tasks|your processes) have been OOM Killed/,
      /Detected (?<oom_events>\d+) oom[_-]kill events?/,
    ],
    remediation: [
      {
        text: "raise the job's memory request (target.slurm.mem, sbatch --mem) or lower the engine's host-RAM use",
        direction: 'increase',
      },
    ],
  },
];
