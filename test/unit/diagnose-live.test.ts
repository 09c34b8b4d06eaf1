// Live mode: collectLiveEvidence talks to a Host with argv arrays only; a fake Host replies per argv.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { collectLiveEvidence } from '../../src/app/diagnose.js';
import { diagnoseLogs } from '../../src/diagnose/index.js';
import type { CommandResult, Host } from '../../src/host/types.js';

const FIX = join(import.meta.dirname, '../fixtures/journal/sglang');

// A Host that answers from a table keyed by argv prefix and records every call.
function fakeHost(replies: [string[], Partial<CommandResult>][]): Host & { calls: string[][] } {
  const calls: string[][] = [];
  return {
    name: 'root@llm-two', calls,
    async exec(argv) {
      calls.push(argv);
      const hit = replies.find(([prefix]) => prefix.every((p, i) => argv[i] === p));
      return { host: 'root@llm-two', argv, exitCode: 0, signal: null, timedOut: false, durationMs: 1, stdout: '', stderr: '', ...(hit?.[1] ?? { exitCode: 1, stderr: 'unexpected command' }) };
    },
    async readFile() { throw new Error('not used'); },
    async writeFile() { throw new Error('not used'); },
    async close() {},
  };
}

describe('collectLiveEvidence', () => {
  it('collects the unit journal, systemctl show and kernel OOM lines, then diagnoses the crash loop', async () => {
    const kernelJson = '{"__REALTIME_TIMESTAMP":"1773095000000000","_TRANSPORT":"kernel","SYSLOG_IDENTIFIER":"kernel","MESSAGE":"usb 1-1: new high-speed USB device"}\n';
    const host = fakeHost([
      [['systemctl', 'show', 'sglang-qwen.service'], { stdout: readFileSync(join(FIX, 'seed2-crash-loop-kv-oom/state.txt'), 'utf8') }],
      [['journalctl', '-u', 'sglang-qwen.service'], { stdout: readFileSync(join(FIX, 'seed2-crash-loop-kv-oom/journal.jsonl'), 'utf8') }],
      [['journalctl', '-k'], { stdout: kernelJson }],
    ]);
    const ev = await collectLiveEvidence(host, 'sglang-qwen.service', '2 min ago');
    expect(host.calls).toEqual([
      ['systemctl', 'show', 'sglang-qwen.service', '--no-pager'],
      ['journalctl', '-u', 'sglang-qwen.service', '-o', 'json', '--since', '2 min ago', '--no-pager'],
      ['journalctl', '-k', '-o', 'json', '--since', '2 min ago', '--no-pager'],
    ]);
    expect(ev.kernelLines).toBe('');
    const d = diagnoseLogs(ev.inputs, { state: ev.state, unit: 'sglang-qwen.service' });
    expect(d.verdict).toMatchObject({ class: 'crash_loop', cause: 'kv_cache_oom' });
    expect(d.verdict.summary).toContain('active (running)');
  });

  it('keeps only OOM/Xid kernel lines and ties a cgroup kill to the unit', async () => {
    const journal = readFileSync(join(FIX, 'exit-137-alone/journal.jsonl'), 'utf8');
    const oom = JSON.stringify({ __REALTIME_TIMESTAMP: String(Date.UTC(2026, 2, 10, 9, 14, 0) * 1000), _TRANSPORT: 'kernel', SYSLOG_IDENTIFIER: 'kernel', MESSAGE: 'Memory cgroup out of memory: Killed process 3109 (python3) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB' });
    const host = fakeHost([
      [['systemctl', 'show'], { stdout: 'Result=signal\nExecMainCode=2\nExecMainStatus=9\n' }],
      [['journalctl', '-u'], { stdout: journal }],
      [['journalctl', '-k'], { stdout: `{"MESSAGE":"eth0: link up","_TRANSPORT":"kernel"}\n${oom}\n` }],
    ]);
    const ev = await collectLiveEvidence(host, 'sglang-qwen.service', '1 hour ago');
    expect(ev.kernelLines.split('\n')).toHaveLength(1);
    const d = diagnoseLogs(ev.inputs, { state: ev.state, kernelLines: ev.kernelLines, unit: 'sglang-qwen.service' });
    expect(d.verdict).toMatchObject({ class: 'host_oom_kill', confidence: 'high' });
  });

  it('reports a missing unit with a coded error', async () => {
    const host = fakeHost([[['systemctl', 'show'], { stdout: 'Id=nope.service\nLoadState=not-found\n' }]]);
    await expect(collectLiveEvidence(host, 'nope.service', '10 min ago')).rejects.toMatchObject({ code: 'E_UNIT_NOT_FOUND' });
  });

  it('tolerates a kernel log it may not read (non-root) and still diagnoses', async () => {
    const host = fakeHost([
      [['systemctl', 'show'], { stdout: 'Result=timeout\n' }],
      [['journalctl', '-u'], { stdout: readFileSync(join(FIX, 'seed1-stop-timeout/journal.jsonl'), 'utf8') }],
      [['journalctl', '-k'], { exitCode: 1, stderr: 'No journal files were opened due to insufficient permissions.' }],
    ]);
    const ev = await collectLiveEvidence(host, 'sglang-qwen.service', '10 min ago');
    expect(diagnoseLogs(ev.inputs, { state: ev.state }).verdict.class).toBe('stop_timeout');
  });
});
