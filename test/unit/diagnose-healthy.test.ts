// No crash in the window: a running, ready service is `healthy`, one still loading is `starting`, both with
// crashed:false, the start/ready evidence, the times as facts, nothing to change, and the same JSON shape as a crash.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diagnoseLogs, renderDiagnosis } from '../../src/diagnose/index.js';

const FIX = join(import.meta.dirname, '../fixtures/journal');
const read = (c: string, f = 'journal.jsonl') => readFileSync(join(FIX, c, f), 'utf8');

describe('healthy verdict', () => {
  it.each([
    [
      'sglang/healthy-startup',
      'Service is running since 09:10:00 UTC (ready after 93 s); no crash in the window. PID 3101 served 12 requests; last line at 09:11:45 UTC.',
    ],
    [
      'vllm/healthy-startup',
      'Service is running since 14:00:00 UTC (ready after 35 s); no crash in the window. PID 5101 served 10 requests; last line at 14:00:45 UTC.',
    ],
    [
      'llamacpp/healthy-startup',
      'Service is running since 08:30:00 UTC (ready after 3 s); no crash in the window. PID 7101 served 4 requests; last line at 08:30:11 UTC.',
    ],
  ])('%s: one-line summary, start and ready lines as evidence, no remediation', (c, summary) => {
    const v = diagnoseLogs([{ name: 'j', content: read(c) }]).verdict;
    expect(v).toMatchObject({
      class: 'healthy',
      cause: null,
      crashed: false,
      confidence: 'high',
      summary,
      remediation: [],
      ruledOut: [],
    });
    expect(v.evidence[0].text).toMatch(/^Starting /);
    expect(v.evidence.some((e) => /ready to roll|Starting vLLM API server|server is listening on/.test(e.text))).toBe(
      true,
    );
  });

  it('gives the start, ready and last-line times and the PID as facts', () => {
    const v = diagnoseLogs([{ name: 'j', content: read('sglang/healthy-startup') }]).verdict;
    expect(v.facts).toEqual({
      requests_served: 12,
      pid: 3101,
      started_at: '2026-03-10T09:10:00Z',
      ready_at: '2026-03-10T09:11:33Z',
      ready_after_s: 93,
      last_line_at: '2026-03-10T09:11:45Z',
      running_for_s: 105,
    });
  });

  it('keeps the JSON shape of every other verdict', () => {
    const healthy = diagnoseLogs([{ name: 'j', content: read('sglang/healthy-startup') }]);
    const crash = diagnoseLogs([{ name: 'j', content: read('sglang/seed1-stop-timeout') }]);
    expect(Object.keys(healthy)).toEqual(Object.keys(crash));
    expect(Object.keys(healthy.verdict)).toEqual(Object.keys(crash.verdict));
    expect(healthy.rootException).toBeNull();
  });

  it('says "no crash found" on the first line of the report', () => {
    const out = renderDiagnosis(diagnoseLogs([{ name: 'j', content: read('sglang/healthy-startup', 'journal.txt') }]));
    expect(out.split('\n').slice(0, 2)).toEqual([
      'Verdict: healthy — no crash found, confidence high',
      '  Service is running since 09:10:00 (ready after 93 s); no crash in the window. PID 3101 served 12 requests; last line at 09:11:45.',
    ]);
    expect(out).toContain('L21     The server is fired up and ready to roll!');
    expect(out).not.toContain('What to change:');
  });

  it('reports the running process, not the clean stop before its restart', () => {
    const stopped = read('sglang/clean-stop-self-sigkill', 'journal.txt');
    const restarted = read('sglang/healthy-startup', 'journal.txt')
      .replace(/\[3101\]/g, '[3201]')
      .replace(/Mar 10 09:1/g, 'Mar 10 09:2');
    const d = diagnoseLogs([{ name: 'j', content: stopped + restarted }]);
    expect(d.verdict).toMatchObject({ class: 'healthy', crashed: false });
    expect(d.verdict.facts?.pid).toBe(3201);
    expect(d.lifetimes.map((l) => l.pid)).toEqual([3102, 3201]);
  });

  it('still reports a crash when the service crashed and then came back', () => {
    const crashed = read('sglang/kv-oom-single', 'journal.txt');
    const restarted = read('sglang/healthy-startup', 'journal.txt')
      .replace(/\[3101\]/g, '[3901]')
      .replace(/Mar 10 09:1/g, 'Mar 10 10:1');
    expect(diagnoseLogs([{ name: 'j', content: crashed + restarted }]).verdict).toMatchObject({
      class: 'kv_cache_oom',
      crashed: true,
    });
  });

  it('is healthy with medium confidence when the window opens mid-life (serving, no start or ready line)', () => {
    const v = diagnoseLogs([{ name: 'j', content: read('sglang/healthy-mid-window') }]).verdict;
    expect(v).toMatchObject({ class: 'healthy', confidence: 'medium', crashed: false });
    expect(v.summary).toBe(
      'Service is running (started before the window; serving since at least 09:10:01 UTC); no crash in the window. PID 3104 served 8 requests; last line at 09:10:08 UTC.',
    );
  });
});

describe('starting verdict', () => {
  it.each([
    [
      'sglang/still-starting',
      'Still starting, not ready yet: PID 3103 started at 09:10:00 UTC; last start-up step: KV cache allocated at 09:11:08 UTC; last line at 09:11:14 UTC (74 s after the start). No crash in the window so far.',
    ],
    [
      'vllm/still-starting',
      'Still starting, not ready yet: PID 5105 started at 14:00:00 UTC; last start-up step: KV cache allocated at 14:00:24 UTC; last line at 14:00:24 UTC (24 s after the start). No crash in the window so far.',
    ],
    [
      'llamacpp/still-starting',
      'Still starting, not ready yet: PID 7105 started at 08:30:00 UTC; last start-up step: engine started at 08:30:01 UTC; last line at 08:30:01 UTC (1 s after the start). No crash in the window so far.',
    ],
  ])('%s is told apart from healthy', (c, summary) => {
    const d = diagnoseLogs([{ name: 'j', content: read(c) }]);
    expect(d.verdict).toMatchObject({
      class: 'starting',
      crashed: false,
      confidence: 'medium',
      summary,
      remediation: [],
    });
    expect(d.lifetimes[0].ready).toBe(false);
    expect(renderDiagnosis(d).split('\n')[0]).toBe(
      'Verdict: starting — not ready yet, no crash found, confidence medium',
    );
  });

  it('does not call a process that printed an exception and keeps running healthy', () => {
    const text =
      read('sglang/healthy-startup', 'engine.log') +
      'Traceback (most recent call last):\n  File "/x.py", line 1, in f\n    g()\nValueError: bad request payload\n';
    const v = diagnoseLogs([{ name: 'j', content: text }]).verdict;
    expect(v).toMatchObject({ class: 'unknown', crashed: false });
    expect(v.summary).toContain('printed an exception');
  });
});
