// Job verdicts from sacct's record plus the job output, on the exact lines real Slurm 22.05 jobs printed here
// (shared/reference/slurm/README.md): cancel, drain cut by KillWait, memory kill reported FAILED, time limit.
import { describe, expect, it } from 'vitest';
import { diagnoseSlurmJob } from './verdict.js';
import type { SlurmJob } from './types.js';

const job = (state: SlurmJob['state'], exit: string, stateText: string = state): SlurmJob => {
  const [code, signal] = exit.split(':').map(Number);
  return {
    jobId: '4',
    name: 't',
    state,
    stateText,
    exit: { code, signal },
    nodes: ['slurmtry'],
    reason: null,
    stdout: null,
    start: null,
    end: null,
    stepEnd: null,
  };
};

describe('Slurm job verdicts', () => {
  it('a drain cut by KillWait (CANCELLED, 0:9) is a stop timeout, not a crash', () => {
    const output = [
      'server ready on port 30000',
      'slurmstepd-slurmtry: error: *** JOB 4 ON slurmtry CANCELLED AT 2026-12-01T14:03:16 ***',
      'SIGTERM: draining 16 requests',
    ].join('\n');
    const { verdict } = diagnoseSlurmJob({
      job: job('CANCELLED', '0:9', 'CANCELLED by 0'),
      output,
      killWaitSec: 5,
      cancelledByUs: true,
    });
    expect([verdict.class, verdict.detail, verdict.confidence]).toEqual(['stop_timeout', 'slurm_killwait', 'high']);
    expect(verdict.summary).toMatch(/KillWait=5s/);
    expect(verdict.evidence.map((e) => e.text)).toEqual(
      expect.arrayContaining([expect.stringMatching(/CANCELLED AT/), 'SIGTERM: draining 16 requests']),
    );
  });
  it('a cancel that exits on SIGTERM (0:15) is a clean stop when spectune cancelled, a kill when someone else did', () => {
    const output = 'slurmstepd-slurmtry: error: *** JOB 1 ON slurmtry CANCELLED AT 2026-12-01T14:02:56 ***\n';
    expect(
      diagnoseSlurmJob({ job: job('CANCELLED', '0:15'), output, killWaitSec: 5, cancelledByUs: true }).verdict.class,
    ).toBe('clean_stop');
    const other = diagnoseSlurmJob({
      job: job('CANCELLED', '0:15'),
      output,
      killWaitSec: 5,
      cancelledByUs: null,
    }).verdict;
    expect([other.class, other.detail]).toEqual(['external_kill', 'slurm_cancel']);
  });
  it('FAILED with a memory-limit line is a memory kill (Slurm does not say OUT_OF_MEMORY here)', () => {
    const output = [
      'allocating 600 MB',
      'slurmstepd-slurmtry: error: StepId=2.batch exceeded memory limit (351096832 > 104857600), being killed',
      'slurmstepd-slurmtry: error: Exceeded job memory limit',
      'slurmstepd-slurmtry: error: Exceeded job memory limit',
    ].join('\n');
    const { verdict } = diagnoseSlurmJob({ job: job('FAILED', '0:9'), output, killWaitSec: 5, cancelledByUs: false });
    expect([verdict.class, verdict.detail, verdict.confidence]).toEqual(['host_oom_kill', 'slurm_mem_limit', 'high']);
    expect(verdict.summary).toMatch(/FAILED, not OUT_OF_MEMORY/);
  });
  it('TIMEOUT with the time-limit line is a time-limit kill', () => {
    const output =
      'slurmstepd-slurmtry: error: *** JOB 5 ON slurmtry CANCELLED AT 2026-12-01T14:04:42 DUE TO TIME LIMIT ***\n';
    const { verdict } = diagnoseSlurmJob({ job: job('TIMEOUT', '0:15'), output, killWaitSec: 5, cancelledByUs: false });
    expect([verdict.class, verdict.detail, verdict.confidence]).toEqual(['external_kill', 'slurm_time_limit', 'high']);
  });
  it('OUT_OF_MEMORY, NODE_FAIL and PREEMPTED have their own verdicts even without output', () => {
    const cls = (s: SlurmJob['state']) =>
      diagnoseSlurmJob({ job: job(s, '0:9'), output: null, killWaitSec: null, cancelledByUs: null }).verdict;
    expect([cls('OUT_OF_MEMORY').detail, cls('NODE_FAIL').detail, cls('PREEMPTED').detail]).toEqual([
      'slurm_cgroup_oom',
      'slurm_node_fail',
      'slurm_preemption',
    ]);
    expect(cls('OUT_OF_MEMORY').confidence).toBe('medium');
    expect(cls('OUT_OF_MEMORY').missing?.[0]).toMatch(/output file could not be read/);
  });
  it("a FAILED job without Slurm lines gets the engine's verdict, with the sacct record as evidence", () => {
    const output =
      '[2026-12-01 14:00:00] Scheduler hit an exception: Traceback (most recent call last):\nRuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\n';
    const { verdict, rule } = diagnoseSlurmJob({
      job: job('FAILED', '1:0'),
      output,
      killWaitSec: 5,
      cancelledByUs: false,
      engine: 'sglang',
    });
    expect(rule).toBeNull();
    expect(verdict.class).toBe('kv_cache_oom');
    expect(verdict.evidence[0]).toMatchObject({
      source: 'sacct',
      text: expect.stringMatching(/State=FAILED ExitCode=1:0/),
    });
  });
});

describe('SIGKILL after a cancel that is not a KillWait cut', () => {
  const cancel = 'slurmstepd-sl2: error: *** JOB 33 ON sl2 CANCELLED AT 2026-12-01T18:36:00 ***';
  it('SGLang drained everything and SIGKILLed itself (0:9 too): a clean stop', () => {
    const output = [
      cancel,
      '[2026-12-01 18:36:00] SIGTERM received. signum=None frame=None. Draining requests and shutting down...',
      '[2026-12-01 18:36:02] Gracefully exiting... Remaining number of requests 0. Remaining requests remaining_rids=[].',
    ].join('\n');
    expect(
      diagnoseSlurmJob({ job: job('CANCELLED', '0:9'), output, killWaitSec: 5, cancelledByUs: true }).verdict.class,
    ).toBe('clean_stop');
  });
  it("the batch step ended 2 s after the cancel, sooner than KillWait=5: not Slurm's SIGKILL", () => {
    const j = { ...job('CANCELLED', '0:9'), stepEnd: '2026-12-01T18:36:02' };
    expect(diagnoseSlurmJob({ job: j, output: `${cancel}\n`, killWaitSec: 5, cancelledByUs: true }).verdict.class).toBe(
      'clean_stop',
    );
    const late = { ...j, stepEnd: '2026-12-01T18:36:05' };
    expect(
      diagnoseSlurmJob({ job: late, output: `${cancel}\n`, killWaitSec: 5, cancelledByUs: true }).verdict.class,
    ).toBe('stop_timeout');
  });
});
