// The verdict of one Slurm job (pure): sacct's state and exit code, Slurm's own lines in the job output, and the
// engine's lines, through the state rules below (data). A cancel whose drain outlasted KillWait is a stop timeout
// (the seed's trap in Slurm form), a FAILED job with a memory-limit line a memory kill, not an unknown failure.
import {
  ALL_RULES,
  diagnoseLogs,
  type DiagnosisClass,
  type Diagnosis,
  type EvidenceLine,
  type Remediation,
  type Verdict,
} from '../diagnose/index.js';
import type { EngineName } from '../engines/types.js';
import type { SlurmJob, SlurmState } from './types.js';

/** SIGKILL's number: ExitCode 0:9 means Slurm (or the kernel) killed the job. */
const SIGKILL = 9;
/** Lines of the engine that say it was draining when the SIGKILL came. */
const DRAIN_LINE = /drain|Gracefully exiting|Remaining number of requests|shutting down|Shutting down/i;

/** One state rule: when it applies and the verdict it gives. */
export interface SlurmStateRule {
  id: string;
  states: SlurmState[];
  /** The exit signal must be this one (0:9 = SIGKILL). */
  signal?: number;
  /** A rule id of diagnose/rules/slurm.ts whose line must be in the output. */
  line?: string;
  /** Applies only when spectune itself cancelled the job (true) or only when someone else did (false). */
  byUs?: boolean;
  /** A further condition on the facts and the output. */
  when?: (f: SlurmJobFacts, output: string) => boolean;
  class: DiagnosisClass;
  detail: string | null;
  crashed: boolean;
  summary: (j: SlurmJob, killWaitSec: number | null) => string;
  remediation: Remediation[];
}

/** Rules (diagnose/rules) whose lines say the engine finished its drain: SGLang then SIGKILLs itself (0:9 too). */
const DRAIN_DONE_RULES = ['sglang.drain_complete'];

// The engine said it drained everything: its own SIGKILL, not Slurm's after KillWait.
function drainedCleanly(output: string): boolean {
  return DRAIN_DONE_RULES.some((id) => linesOf(output, id, '').length > 0);
}

// The job's processes were gone sooner after the cancel than KillWait: Slurm's SIGKILL cannot have been the end.
function endedWithinKillWait(f: SlurmJobFacts, output: string): boolean {
  const at = linesOf(output, 'slurm.cancelled', '')[0]?.text.match(/CANCELLED AT (\S+)/)?.[1];
  if (!at || !f.job.stepEnd || f.killWaitSec === null) return false;
  const ms = Date.parse(f.job.stepEnd) - Date.parse(at);
  return Number.isFinite(ms) && ms < f.killWaitSec * 1000;
}

const exitText = (j: SlurmJob) => (j.exit ? `${j.exit.code}:${j.exit.signal}` : '?');
const on = (j: SlurmJob) => (j.nodes.length ? ` on ${j.nodes.join(',')}` : '');

/** The state rules, first match wins. */
export const SLURM_STATE_RULES: readonly SlurmStateRule[] = [
  {
    id: 'slurm.state.killwait',
    states: ['CANCELLED'],
    signal: SIGKILL,
    when: (f, out) => !drainedCleanly(out) && !endedWithinKillWait(f, out),
    class: 'stop_timeout',
    detail: 'slurm_killwait',
    crashed: true,
    summary: (j, kw) =>
      `job ${j.jobId}${on(j)} was cancelled and did not exit within KillWait${kw === null ? '' : `=${kw}s`}: Slurm SIGKILLed it mid-drain (ExitCode ${exitText(j)}); a stop timeout, not a crash`,
    remediation: [
      {
        text: 'drain before the cancel: send SIGTERM first (scancel --signal=TERM, or sbatch --signal=TERM@SECONDS) and scancel only after the engine has exited; spectune does so',
        unitDirective: 'KillWait',
        direction: 'increase',
      },
      { text: 'or raise KillWait in slurm.conf above the longest drain (it is cluster-wide)' },
    ],
  },
  {
    id: 'slurm.state.timeout',
    states: ['TIMEOUT'],
    class: 'external_kill',
    detail: 'slurm_time_limit',
    crashed: true,
    summary: (j) =>
      `job ${j.jobId}${on(j)} ran into its time limit and Slurm ended it (TIMEOUT, ExitCode ${exitText(j)})`,
    remediation: [
      { text: 'raise the time limit (target.slurm.timeLimit, sbatch --time) above start-up plus benchmark time' },
    ],
  },
  {
    id: 'slurm.state.out_of_memory',
    states: ['OUT_OF_MEMORY'],
    class: 'host_oom_kill',
    detail: 'slurm_cgroup_oom',
    crashed: true,
    summary: (j) => `job ${j.jobId}${on(j)} ran out of its memory cgroup and the OOM killer killed it (OUT_OF_MEMORY)`,
    remediation: [
      {
        text: "raise the memory request (target.slurm.mem, sbatch --mem) or lower the engine's host-RAM use",
        direction: 'increase',
      },
    ],
  },
  {
    id: 'slurm.state.mem_limit',
    states: ['FAILED', 'CANCELLED', 'COMPLETED'],
    line: 'slurm.mem_limit',
    class: 'host_oom_kill',
    detail: 'slurm_mem_limit',
    crashed: true,
    summary: (j) =>
      `job ${j.jobId}${on(j)} used more memory than it asked for and Slurm killed it (${j.state}, ExitCode ${exitText(j)}: Slurm reports this memory kill as ${j.state}, not OUT_OF_MEMORY)`,
    remediation: [
      {
        text: "raise the memory request (target.slurm.mem, sbatch --mem) or lower the engine's host-RAM use",
        direction: 'increase',
      },
    ],
  },
  {
    id: 'slurm.state.oom_line',
    states: ['FAILED', 'CANCELLED', 'COMPLETED'],
    line: 'slurm.oom_kill_event',
    class: 'host_oom_kill',
    detail: 'slurm_cgroup_oom',
    crashed: true,
    summary: (j) =>
      `job ${j.jobId}${on(j)}: the kernel OOM killer killed a process of the job (${j.state}, ExitCode ${exitText(j)})`,
    remediation: [
      {
        text: "raise the memory request (target.slurm.mem, sbatch --mem) or lower the engine's host-RAM use",
        direction: 'increase',
      },
    ],
  },
  {
    id: 'slurm.state.node_fail',
    states: ['NODE_FAIL', 'BOOT_FAIL'],
    class: 'external_kill',
    detail: 'slurm_node_fail',
    crashed: true,
    summary: (j) => `job ${j.jobId}${on(j)} ended because its node failed (${j.state}); the engine is not to blame`,
    remediation: [{ text: "check `sinfo -R` and slurmctld's log; redo the trial on another node" }],
  },
  {
    id: 'slurm.state.preempted',
    states: ['PREEMPTED'],
    class: 'external_kill',
    detail: 'slurm_preemption',
    crashed: true,
    summary: (j) => `job ${j.jobId}${on(j)} was preempted by a higher-priority job (PREEMPTED)`,
    remediation: [{ text: 'use a partition or QOS without preemption for tuning, or redo preempted trials' }],
  },
  {
    id: 'slurm.state.cancel_ours',
    states: ['CANCELLED'],
    byUs: true,
    class: 'clean_stop',
    detail: null,
    crashed: false,
    summary: (j) =>
      `job ${j.jobId}${on(j)} was ended by spectune after its trial and exited within KillWait (ExitCode ${exitText(j)})`,
    remediation: [],
  },
  {
    id: 'slurm.state.cancel_other',
    states: ['CANCELLED'],
    class: 'external_kill',
    detail: 'slurm_cancel',
    crashed: true,
    summary: (j) => `job ${j.jobId}${on(j)} was cancelled (${j.stateText}, ExitCode ${exitText(j)})`,
    remediation: [{ text: 'someone or something ran scancel on the job (the user, an admin, a workflow manager)' }],
  },
];

/** What the verdict is built from. */
export interface SlurmJobFacts {
  job: SlurmJob;
  /** The job's output file (stdout+stderr), or null when it could not be read. */
  output: string | null;
  killWaitSec: number | null;
  /** True when spectune cancelled the job itself (the end of a trial); null = unknown (a job diagnosed by id). */
  cancelledByUs: boolean | null;
  engine?: EngineName;
}

// The lines of the output a diagnose rule matches (1-based line numbers of the output file).
function linesOf(output: string, ruleId: string, source: string): EvidenceLine[] {
  const rule = ALL_RULES.find((r) => r.id === ruleId);
  if (!rule) return [];
  const out: EvidenceLine[] = [];
  output.split('\n').forEach((text, i) => {
    if (rule.patterns.some((p) => p.test(text))) out.push({ line: i + 1, text: text.trimEnd(), source });
  });
  return out;
}

// Slurm's own lines (cancel, time limit, memory) in the output, plus the engine's drain line after a cancel.
function slurmEvidence(output: string, source: string, drain: boolean): EvidenceLine[] {
  const ids = [
    'slurm.time_limit',
    'slurm.preempted',
    'slurm.node_fail',
    'slurm.cancelled',
    'slurm.mem_limit',
    'slurm.oom_kill_event',
  ];
  const hits = ids.flatMap((id) => linesOf(output, id, source));
  const first = hits.reduce((m, h) => Math.min(m, h.line), Number.POSITIVE_INFINITY);
  const lines = output.split('\n');
  const drainLine = drain ? lines.findIndex((t, i) => i + 1 > first && DRAIN_LINE.test(t)) : -1;
  if (drainLine >= 0) hits.push({ line: drainLine + 1, text: lines[drainLine].trimEnd(), source });
  return hits.sort((a, b) => a.line - b.line).slice(0, 6);
}

// Whether a state rule applies.
function applies(r: SlurmStateRule, f: SlurmJobFacts, output: string): boolean {
  if (!r.states.includes(f.job.state)) return false;
  if (r.signal !== undefined && f.job.exit?.signal !== r.signal) return false;
  if (r.line && linesOf(output, r.line, '').length === 0) return false;
  if (r.byUs !== undefined && f.cancelledByUs !== r.byUs) return false;
  return r.when ? r.when(f, output) : true;
}

// The sacct record as one evidence line.
function recordLine(j: SlurmJob): EvidenceLine {
  return {
    line: 1,
    source: 'sacct',
    text: `JobID=${j.jobId} JobName=${j.name} State=${j.stateText} ExitCode=${exitText(j)} NodeList=${j.nodes.join(',') || 'None'}${j.reason ? ` Reason=${j.reason}` : ''}`,
  };
}

// The verdict of a job: a state rule when one applies (the engine's own verdict is then ruled out), else the engine's.
export function diagnoseSlurmJob(f: SlurmJobFacts): {
  verdict: Verdict;
  engine: Diagnosis | null;
  rule: string | null;
} {
  const source = `slurm-${f.job.jobId}.out`;
  const output = f.output ?? '';
  const engine =
    f.output !== null ? diagnoseLogs([{ name: source, content: output }], f.engine ? { engine: f.engine } : {}) : null;
  const rule = SLURM_STATE_RULES.find((r) => applies(r, f, output));
  const missing = f.output === null ? ['the job output file could not be read: only sacct/scontrol decided'] : [];
  if (rule) {
    const evidence = [recordLine(f.job), ...slurmEvidence(output, source, rule.class === 'stop_timeout')];
    const ruledOut =
      engine && engine.verdict.class !== rule.class && engine.verdict.class !== 'unknown'
        ? [
            {
              class: engine.verdict.class,
              why: `Slurm's record decides: ${f.job.stateText} ExitCode ${exitText(f.job)}`,
            },
          ]
        : [];
    const confidence = evidence.length > 1 || rule.class === 'clean_stop' ? 'high' : 'medium';
    return {
      engine,
      rule: rule.id,
      verdict: {
        class: rule.class,
        cause: null,
        confidence,
        summary: rule.summary(f.job, f.killWaitSec),
        evidence,
        ruledOut,
        remediation: rule.remediation,
        crashed: rule.crashed,
        detail: rule.detail,
        facts: {
          job_id: f.job.jobId,
          state: f.job.state,
          exit_code: exitText(f.job),
          ...(f.killWaitSec === null ? {} : { kill_wait_sec: f.killWaitSec }),
        },
        missing,
        collect: missing.length ? [`sacct -j ${f.job.jobId} --parsable2`, `scontrol show job ${f.job.jobId}`] : [],
      },
    };
  }
  const base: Verdict = engine?.verdict ?? {
    class: 'unknown',
    cause: null,
    confidence: 'low',
    summary: 'no job output to read',
    evidence: [],
    ruledOut: [],
    remediation: [],
  };
  const summary = `job ${f.job.jobId}${on(f.job)} ${f.job.stateText} (ExitCode ${exitText(f.job)}): ${base.summary}`;
  return {
    engine,
    rule: null,
    verdict: {
      ...base,
      summary,
      evidence: [recordLine(f.job), ...base.evidence],
      missing: [...(base.missing ?? []), ...missing],
    },
  };
}
