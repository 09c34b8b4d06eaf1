// Verdicts from the real records of test/fixtures/slurm (Slurm 22.05.8 on the test cluster: job output, sacct,
// scontrol show job), one per way a job ends: what `spectune diagnose --slurm-job` decides from the same text.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseSacct, parseScontrolJob } from './parse.js';
import { diagnoseSlurmJob } from './verdict.js';

const DIR = join(import.meta.dirname, '../../test/fixtures/slurm');
const read = (c: string, f: string) => readFileSync(join(DIR, c, f), 'utf8');

// The verdict of a fixture job, from sacct (as the campaign reads it after a job ends) or scontrol.
function verdictOf(c: string, from: 'sacct' | 'scontrol', cancelledByUs: boolean | null = null) {
  const job = from === 'sacct' ? parseSacct(read(c, 'sacct.txt'))[0] : parseScontrolJob(read(c, 'scontrol.txt'))!;
  return { job, verdict: diagnoseSlurmJob({ job, output: read(c, 'job.out'), killWaitSec: 5, cancelledByUs }).verdict };
}

describe('real Slurm job records', () => {
  it.each(['sacct', 'scontrol'] as const)(
    'from %s: OOM, time limit, KillWait cut and cancel each get their own verdict',
    (from) => {
      const oom = verdictOf('oom', from).verdict;
      expect([oom.class, oom.detail, oom.confidence]).toEqual(['host_oom_kill', 'slurm_cgroup_oom', 'high']);
      expect(oom.evidence.some((e) => /Detected 1 oom-kill event\(s\) in StepId=\d+\.batch/.test(e.text))).toBe(true);
      const to = verdictOf('timeout', from).verdict;
      expect([to.class, to.detail, to.confidence]).toEqual(['external_kill', 'slurm_time_limit', 'high']);
      const drain = verdictOf('cancel-drain', from).verdict;
      expect([drain.class, drain.detail, drain.confidence]).toEqual(['stop_timeout', 'slurm_killwait', 'high']);
      expect(drain.evidence.map((e) => e.text)).toContain('SIGTERM: draining 16 requests');
      const cancel = verdictOf('cancel', from).verdict;
      expect([cancel.class, cancel.detail]).toEqual(['external_kill', 'slurm_cancel']);
      expect(verdictOf('cancel', from, true).verdict.class).toBe('clean_stop');
    },
  );
  it('reads exit codes, nodes and output paths as Slurm wrote them', () => {
    expect(parseSacct(read('cancel-drain', 'sacct.txt'))[0].exit).toEqual({ code: 0, signal: 9 });
    expect(parseSacct(read('oom', 'sacct.txt'))[0]).toMatchObject({
      state: 'OUT_OF_MEMORY',
      exit: { code: 0, signal: 125 },
    });
    expect(parseSacct(read('two-node', 'sacct.txt'))[0].nodes).toEqual(['sl2', 'sl3']);
    expect(parseScontrolJob(read('cancel-drain', 'scontrol.txt'))).toMatchObject({
      state: 'CANCELLED',
      exit: { code: 0, signal: 9 },
      nodes: ['sl3'],
      stdout: expect.stringMatching(/cancel-drain\.out$/),
    });
    const done = verdictOf('completed', 'sacct').verdict;
    expect(done.crashed ?? false).toBe(false);
  });
});
