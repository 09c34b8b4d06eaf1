// The parsers against Slurm 22.05's output forms (shared/reference/slurm: the lines real jobs printed here).
import { describe, expect, it } from 'vitest';
import {
  expandHostlist,
  parseExit,
  parseKeyValues,
  parseSacct,
  parseScontrolConfig,
  parseScontrolJob,
  parseSinfoNodes,
  parseSqueue,
  parseState,
} from './parse.js';

describe('slurm parsers', () => {
  it('reads sacct --parsable2 allocations, the signal from the batch step when the allocation says 0:0', () => {
    const text = [
      'JobID|JobName|State|ExitCode|NodeList|Start|End',
      '4|spectune-t3|CANCELLED by 0|0:0|slurmtry|2026-12-01T14:03:10|2026-12-01T14:03:21',
      '4.batch|batch|CANCELLED|0:9|slurmtry|2026-12-01T14:03:10|2026-12-01T14:03:21',
      '2|memhog|FAILED|0:9|n[1-2]|2026-12-01T14:01:00|Unknown',
      '2.extern|extern|COMPLETED|0:0|n[1-2]|2026-12-01T14:01:00|2026-12-01T14:01:04',
      '7|t7|PENDING|0:0|None assigned|Unknown|Unknown',
    ].join('\n');
    const jobs = parseSacct(text);
    expect(jobs.map((j) => [j.jobId, j.state, j.exit?.signal, j.nodes.join(',')])).toEqual([
      ['4', 'CANCELLED', 9, 'slurmtry'],
      ['2', 'FAILED', 9, 'n1,n2'],
      ['7', 'PENDING', 0, ''],
    ]);
    expect(jobs[0].stateText).toBe('CANCELLED by 0');
    expect(jobs[1].end).toBeNull();
  });
  it('maps states, short forms and truncations', () => {
    expect(parseState('OUT_OF_ME+')).toBe('OUT_OF_MEMORY');
    expect(parseState('CA')).toBe('CANCELLED');
    expect(parseState('TIMEOUT')).toBe('TIMEOUT');
    expect(parseState('NODE_FAIL')).toBe('NODE_FAIL');
    expect(parseState('bogus')).toBe('UNKNOWN');
    expect(parseExit('0:15')).toEqual({ code: 0, signal: 15 });
    expect(parseExit('x')).toBeNull();
  });
  it('expands hostlists', () => {
    expect(expandHostlist('gpu[01-03,07],login')).toEqual(['gpu01', 'gpu02', 'gpu03', 'gpu07', 'login']);
    expect(expandHostlist('(null)')).toEqual([]);
  });
  it('reads scontrol show job -o, StdOut and Reason included', () => {
    const line =
      'JobId=5 JobName=sleeper UserId=root(0) GroupId=root(0) JobState=TIMEOUT Reason=TimeLimit Dependency=(null) ExitCode=0:15 RunTime=00:01:02 NodeList=slurmtry BatchHost=slurmtry StdOut=/tmp/out-5.txt Command=/bin/sh -c sleep 300';
    const j = parseScontrolJob(line)!;
    expect([j.jobId, j.state, j.reason, j.exit, j.nodes, j.stdout]).toEqual([
      '5',
      'TIMEOUT',
      'TimeLimit',
      { code: 0, signal: 15 },
      ['slurmtry'],
      '/tmp/out-5.txt',
    ]);
    expect(parseKeyValues(line).Command).toBe('/bin/sh -c sleep 300');
    expect(parseScontrolJob('slurm_load_jobs error: Invalid job id specified')).toBeNull();
  });
  it('reads KillWait and accounting from scontrol show config', () => {
    const cfg = parseScontrolConfig(
      'Configuration data as of 2026-12-01T14:00:00\nAccountingStorageType   = accounting_storage/slurmdbd\nClusterName             = try\nKillWait                = 5 sec\n',
    );
    expect(cfg).toEqual({ killWaitSec: 5, accounting: true, clusterName: 'try' });
    expect(parseScontrolConfig('AccountingStorageType = accounting_storage/none\n').accounting).toBe(false);
  });
  it('reads squeue and sinfo rows', () => {
    expect(parseSqueue('12|RUNNING|n2|None\n13|PENDING||Resources\n')).toEqual([
      { jobId: '12', state: 'RUNNING', nodes: ['n2'], reason: null },
      { jobId: '13', state: 'PENDING', nodes: [], reason: 'Resources' },
    ]);
    expect(parseSinfoNodes('n1|idle\nn2|mix\nn3|down*\n')).toEqual([
      { node: 'n1', state: 'idle' },
      { node: 'n2', state: 'mix' },
      { node: 'n3', state: 'down' },
    ]);
  });
});
