// The library API other engineers call: findFatalLine, rulesForEngine, parseSystemctlShow, diagnoseLogs edge cases.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENGINE_NAMES } from '../engines/registry.js';
import { ToolError } from '../errors.js';
import {
  diagnoseLogs,
  findFatalLine,
  namesNoFailure,
  parseActionLog,
  parseSystemctlShow,
  renderDiagnosis,
  rulesForEngine,
} from './index.js';
import type { Verdict } from './types.js';

describe('findFatalLine', () => {
  it('classifies a bare SGLang KV-pool error', () => {
    expect(
      findFatalLine('RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.', 'sglang'),
    ).toEqual({ ruleId: 'sglang.kv_pool_not_enough_memory', class: 'kv_cache_oom' });
  });
  it('strips the vLLM prefix and the journal wrapper', () => {
    const line =
      'Apr 02 14:00:01 h vllm[1]: (EngineCore_DP0 pid=2) ERROR 04-02 14:00:01 [core.py:708] ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.';
    expect(findFatalLine(line)?.class).toBe('kv_cache_oom');
  });
  it('prefers the more specific class on one line (graph capture wraps an OOM)', () => {
    expect(
      findFatalLine('Exception: Capture cuda graph failed: CUDA out of memory. Tried to allocate 2.00 GiB', 'sglang')
        ?.class,
    ).toBe('cuda_graph_capture_failure');
  });
  it('returns null for healthy lines and clean-stop markers', () => {
    for (const l of [
      '[2026-03-09 22:20:13] The server is fired up and ready to roll!',
      '[2026-03-09 22:28:48] Gracefully exiting... Remaining number of requests 0. Remaining requests remaining_rids=[].',
      'srv  update_slots: all slots are idle',
    ]) {
      expect(findFatalLine(l), l).toBeNull();
    }
  });
  it('respects the engine: a llama.cpp pattern is not an SGLang finding', () => {
    expect(findFatalLine('failed to allocate buffer for kv cache', 'sglang')).toBeNull();
    expect(findFatalLine('failed to allocate buffer for kv cache', 'llamacpp')?.class).toBe('kv_cache_oom');
  });
});

describe('rulesForEngine', () => {
  it('gives each engine its dialect plus the shared systemd/kernel rules', () => {
    for (const e of ENGINE_NAMES) {
      const ids = rulesForEngine(e).map((r) => r.id);
      expect(ids).toContain('systemd.stop_sigterm_timeout');
      expect(ids).toContain('kernel.oom_killed_process');
      expect(rulesForEngine(e).every((r) => !r.engines || r.engines.includes(e))).toBe(true);
    }
    expect(rulesForEngine('vllm').map((r) => r.id)).not.toContain('sglang.kv_pool_not_enough_memory');
  });
  it('keeps rule ids unique', () => {
    for (const e of ENGINE_NAMES)
      expect(new Set(rulesForEngine(e).map((r) => r.id)).size).toBe(rulesForEngine(e).length);
    const all = new Set<string>();
    for (const r of ENGINE_NAMES.flatMap(rulesForEngine)) all.add(`${r.id}|${r.class}`);
    expect([...all].map((x) => x.split('|')[0]).length).toBe(new Set([...all].map((x) => x.split('|')[0])).size);
  });
});

describe('parseSystemctlShow', () => {
  it('types the properties diagnose weighs and keeps the rest raw', () => {
    const s = parseSystemctlShow(
      'Type=simple\nResult=oom-kill\nExecMainCode=2\nExecMainStatus=9\nNRestarts=3\nActiveState=failed\nSubState=failed\nMainPID=0\nExecStart={ path=/usr/bin/python3 ; argv[]=/usr/bin/python3 -m sglang.launch_server }\n',
    );
    expect(s).toMatchObject({
      Result: 'oom-kill',
      ExecMainCode: 2,
      ExecMainStatus: 9,
      NRestarts: 3,
      ActiveState: 'failed',
      SubState: 'failed',
      MainPID: 0,
    });
    expect(s.properties.ExecStart).toContain('argv[]=/usr/bin/python3');
  });
  it('returns nulls for missing or non-numeric values', () => {
    expect(parseSystemctlShow('NRestarts=\nFoo=bar')).toMatchObject({ NRestarts: null, Result: null, MainPID: null });
  });
  it('parses action logs and skips malformed lines', () => {
    const r = parseActionLog(
      '{"ts":"2026-03-09T22:27:18Z","action":"stop","unit":"u","by":"operator"}\nnot json\n{"action":"stop"}\n',
    );
    expect(r).toEqual({
      actions: [{ ts: '2026-03-09T22:27:18Z', action: 'stop', unit: 'u', by: 'operator' }],
      skipped: 2,
    });
  });
});

describe('diagnoseLogs', () => {
  it('refuses empty input with a coded error', () => {
    expect(() => diagnoseLogs([{ name: 'x', content: '' }])).toThrow(ToolError);
    try {
      diagnoseLogs([{ name: 'x', content: '' }]);
    } catch (e) {
      expect((e as ToolError).code).toBe('E_INPUT_UNUSABLE');
    }
  });
  it('reads any non-empty text: unrecognised lines are engine output of one lifetime, and the verdict names what was missing', () => {
    const d = diagnoseLogs([{ name: 'x', content: 'hello\nworld\n' }]);
    expect(d.verdict.class).toBe('unknown');
    expect(d.verdict.confidence).toBe('low');
    expect(d.lifetimes).toHaveLength(1);
    expect(d.verdict.missing).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^no timestamps: no timeline/),
        expect.stringMatching(/^no systemd lines: a stop cannot be told from a crash/),
      ]),
    );
    expect(d.verdict.collect).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^journalctl -u UNIT -o json --since '1 hour ago' > journal\.json$/),
      ]),
    );
  });
  it('refuses only blank input, with a one-line reason', () => {
    expect(() => diagnoseLogs([{ name: 'x', content: '\n\n  \n'.replace('  ', '') }])).toThrow(/only blank lines/);
    expect(() => diagnoseLogs([{ name: 'x', content: '' }])).toThrow(/the input is empty/);
  });
  it('a pasted traceback fragment gets a verdict and a collect-next command at the time of its stamps', () => {
    const d = diagnoseLogs(
      [
        {
          name: 'x',
          content:
            '[2026-03-10 10:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):\nRuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\n',
        },
      ],
      { unit: 'sglang-qwen.service' },
    );
    expect(d.verdict.class).toBe('kv_cache_oom');
    expect(d.verdict.collect?.[0]).toBe(
      "journalctl -u sglang-qwen.service -o json --since '2026-03-10 09:55:00' > journal.json",
    );
  });
  it('takes the earliest failure across nodes as the root cause (NCCL errors on the other node are its echo)', () => {
    const node1 = [
      'Mar 10 10:00:00 n1 sglang[100]: [2026-03-10 10:00:00 TP0] Load weight end. type=X, dtype=torch.bfloat16, avail mem=3.00 GB, mem usage=60.00 GB.',
      'Mar 10 10:00:05 n1 sglang[100]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity of 80 GiB',
      'Mar 10 10:00:06 n1 systemd[1]: sglang.service: Main process exited, code=killed, status=9/KILL',
    ].join('\n');
    const node2 = [
      'Mar 10 10:00:01 n2 sglang[200]: [2026-03-10 10:00:01 TP4] Load weight end. type=X, dtype=torch.bfloat16, avail mem=3.00 GB, mem usage=60.00 GB.',
      'Mar 10 10:00:09 n2 sglang[200]: RuntimeError: NCCL error: remote process exited or there was a network error',
      'Mar 10 10:00:10 n2 systemd[1]: sglang.service: Main process exited, code=killed, status=9/KILL',
    ].join('\n');
    const d = diagnoseLogs([
      { name: 'node2.txt', content: node2 },
      { name: 'node1.txt', content: node1 },
    ]);
    expect(d.verdict.class).toBe('cuda_oom');
    expect(d.verdict.evidence[0]).toMatchObject({ source: 'node1.txt', line: 2 });
    expect(d.lifetimes.map((l) => [l.source, l.cause])).toEqual([
      ['node2.txt', 'distributed_error'],
      ['node1.txt', 'cuda_oom'],
    ]);
  });
  it('quotes the most suspicious lines when no rule explains a crash', () => {
    const text = [
      'Mar 10 10:00:00 h app[5]: [2026-03-10 10:00:00] Load weight begin. avail mem=94.63 GB',
      'Mar 10 10:00:03 h app[5]: [2026-03-10 10:00:03] ERROR something odd happened in the frobnicator',
      'Mar 10 10:00:04 h systemd[1]: x.service: Main process exited, code=exited, status=3/NOTIMPLEMENTED',
    ].join('\n');
    const d = diagnoseLogs([{ name: 'x', content: text }]);
    expect(d.verdict).toMatchObject({ class: 'unknown', crashed: true, confidence: 'low' });
    expect(d.verdict.evidence.map((e) => e.text).join('\n')).toContain('frobnicator');
  });
  it('takes kernel lines given apart as evidence of a cgroup-v1 memory kill', () => {
    const journal =
      "Mar 10 10:00:00 h sglang[4242]: [2026-03-10 10:00:00] The server is fired up and ready to roll!\nMar 10 10:05:00 h systemd[1]: sglang.service: Main process exited, code=killed, status=9/KILL\nMar 10 10:05:00 h systemd[1]: sglang.service: Failed with result 'signal'.\n";
    const kernel =
      'Mar 10 10:04:59 h kernel: Memory cgroup out of memory: Killed process 4242 (python3) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB\n';
    const without = diagnoseLogs([{ name: 'j', content: journal }]);
    expect(without.verdict).toMatchObject({ class: 'external_kill', confidence: 'low' });
    const withKernel = diagnoseLogs([{ name: 'j', content: journal }], { kernelLines: kernel });
    expect(withKernel.verdict).toMatchObject({ class: 'host_oom_kill', confidence: 'high' });
  });
  it('redacts secrets in the human report', () => {
    const text =
      "Mar 10 10:00:00 h sglang[1]: [2026-03-10 10:00:00] server_args=ServerArgs(model_path='/m', api_key='sk-abcdefghijklmnopqrstu', port=1)\nMar 10 10:00:01 h sglang[1]: RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. --api-key sk-abcdefghijklmnopqrstu\n";
    const out = renderDiagnosis(diagnoseLogs([{ name: 'x', content: text }]));
    expect(out).toContain('kv_cache_oom');
    expect(out).not.toContain('sk-abcdefghijklmnopqrstu');
  });
});

describe('journalctl text variants', () => {
  const short = readFileSync(
    join(import.meta.dirname, '../../test/fixtures/journal/sglang/seed1-stop-timeout/journal.txt'),
    'utf8',
  );
  const MONTHS: Record<string, string> = { Mar: '03' };
  const iso = short.replace(
    /^(\w{3}) (\d{2}) (\d{2}:\d{2}:\d{2})/gm,
    (_m, mon: string, d: string, t: string) => `2026-${MONTHS[mon]}-${d}T${t}+0000`,
  );
  const precise = short.replace(/^(\w{3} \d{2} \d{2}:\d{2}:\d{2})/gm, '$1.123456');
  it.each([
    ['short-iso', iso],
    ['short-precise', precise],
  ])('reads %s like short', (_name, text) => {
    const a = diagnoseLogs([{ name: 'x', content: short }]);
    const b = diagnoseLogs([{ name: 'x', content: text }]);
    expect(b.verdict.class).toBe('stop_timeout');
    expect(b.verdict.facts).toEqual(a.verdict.facts);
    expect(b.lifetimes.map((l) => [l.pid, l.requestsServed, l.exit])).toEqual(
      a.lifetimes.map((l) => [l.pid, l.requestsServed, l.exit]),
    );
    expect(b.inputs?.[0].formats.journal).toBe(a.inputs?.[0].formats.journal);
  });
});

describe('journalctl -o json-seq', () => {
  it('reads entries prefixed with a record separator', () => {
    const json = readFileSync(
      join(import.meta.dirname, '../../test/fixtures/journal/sglang/seed1-stop-timeout/journal.jsonl'),
      'utf8',
    );
    const seq = json
      .split('\n')
      .map((l) => (l ? `\x1e${l}` : l))
      .join('\n');
    const d = diagnoseLogs([{ name: 'x', content: seq }]);
    expect(d.verdict.class).toBe('stop_timeout');
    expect(d.inputs?.[0].formats.plain).toBe(0);
  });
});

describe('OOM records of other processes', () => {
  const journal =
    'Mar 10 10:00:00 h sglang[4242]: [2026-03-10 10:00:00] The server is fired up and ready to roll!\nMar 10 10:05:00 h systemd[1]: sglang.service: Main process exited, code=killed, status=9/KILL\n';
  it("ignores a kill in another unit's cgroup", () => {
    const kernel =
      'Mar 10 10:04:59 h kernel: oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),oom_memcg=/system.slice/etl.service,task_memcg=/system.slice/etl.service,task=java,pid=999,uid=0\nMar 10 10:04:59 h kernel: Memory cgroup out of memory: Killed process 999 (java) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB\n';
    const d = diagnoseLogs([{ name: 'j', content: journal }], { kernelLines: kernel, unit: 'sglang.service' });
    expect(d.verdict.class).toBe('external_kill');
    expect(d.verdict.confidence).toBe('medium');
  });
  it('says medium, not high, when a kill is tied to the service by time only', () => {
    const kernel =
      'Mar 10 10:04:59 h kernel: Out of memory: Killed process 999 (python3) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB\n';
    const d = diagnoseLogs([{ name: 'j', content: journal }], { kernelLines: kernel, unit: 'sglang.service' });
    expect(d.verdict).toMatchObject({ class: 'host_oom_kill', confidence: 'medium' });
  });
});

describe('journal JSON quirks', () => {
  it('decodes a MESSAGE stored as bytes with ANSI colours, and a null (over 4096 bytes) MESSAGE', () => {
    const coloured = Buffer.from(
      '\x1b[31mRuntimeError: Not enough memory. Please try to increase --mem-fraction-static.\x1b[0m',
    );
    const lines = [
      JSON.stringify({
        __REALTIME_TIMESTAMP: '1773095000000000',
        _PID: '42',
        SYSLOG_IDENTIFIER: 'sglang',
        _TRANSPORT: 'stdout',
        MESSAGE: '[2026-03-09 22:23:20] Load weight begin. avail mem=94.63 GB',
      }),
      JSON.stringify({
        __REALTIME_TIMESTAMP: '1773095001000000',
        _PID: '42',
        SYSLOG_IDENTIFIER: 'sglang',
        _TRANSPORT: 'stdout',
        MESSAGE: null,
      }),
      JSON.stringify({
        __REALTIME_TIMESTAMP: '1773095002000000',
        _PID: '42',
        SYSLOG_IDENTIFIER: 'sglang',
        _TRANSPORT: 'stdout',
        MESSAGE: [...coloured],
      }),
    ];
    const d = diagnoseLogs([{ name: 'x', content: lines.join('\n') }]);
    expect(d.verdict.class).toBe('kv_cache_oom');
    expect(d.verdict.evidence[0]).toEqual({
      line: 3,
      text: 'RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.',
    });
    expect(d.inputs?.[0].formats.json).toBe(3);
    expect(d.timeline[0]).toMatchObject({ ts: '2026-03-09T22:23:22Z', line: 3, kind: 'error:kv_cache_oom' });
  });
});

describe('namesNoFailure', () => {
  const v = (cls: string, crashed?: boolean) =>
    ({
      class: cls,
      cause: null,
      confidence: 'high',
      summary: '',
      evidence: [],
      ruledOut: [],
      remediation: [],
      ...(crashed === undefined ? {} : { crashed }),
    }) as unknown as Verdict;
  it('is true for verdicts without a failure and false for crash classes', () => {
    for (const c of ['healthy', 'starting', 'clean_stop', 'unknown']) expect(namesNoFailure(v(c)), c).toBe(true);
    expect(namesNoFailure(v('stop_timeout', false))).toBe(true);
    for (const c of ['kv_cache_oom', 'crash_loop', 'stop_timeout']) expect(namesNoFailure(v(c, true)), c).toBe(false);
  });
});

describe('lines that quote user text or carry journald members in odd places', () => {
  it('a request log that quotes "CUDA out of memory" in a prompt is not a crash', () => {
    const log = [
      '[2026-03-10 10:00:00] The server is fired up and ready to roll!',
      "[2026-03-10 10:00:05 TP0] Receive: obj=GenerateReqInput(rid='bench-1', text='why does torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB happen?')",
      '[2026-03-10 10:00:06] INFO:     10.0.0.1:5000 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
    ].join('\n');
    const v = diagnoseLogs([{ name: 'x', content: log }]).verdict;
    expect(v.class).toBe('healthy');
    expect(v.crashed).toBe(false);
  });
  it('reads the journal members it needs whatever their order, and never a key quoted inside a value', () => {
    const entry = (msg: string) =>
      JSON.stringify({
        MESSAGE: msg,
        _PID: '42',
        SYSLOG_IDENTIFIER: 'sglang',
        __REALTIME_TIMESTAMP: '1773136800000000',
        _TRANSPORT: 'stdout',
        _SYSTEMD_UNIT: 'sglang-qwen.service',
      });
    const tricky = JSON.stringify({
      __CURSOR: 's=1',
      MESSAGE: 'x ,"_PID":"1", "UNIT":"other.service"',
      _PID: '42',
      SYSLOG_IDENTIFIER: 'sglang',
      __REALTIME_TIMESTAMP: '1773136801000000',
      _SYSTEMD_UNIT: 'sglang-qwen.service',
    });
    const d = diagnoseLogs(
      [
        {
          name: 'j',
          content: [
            entry('[2026-03-10 10:00:00] The server is fired up and ready to roll!'),
            tricky,
            entry('RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.'),
          ].join('\n'),
        },
      ],
      { unit: 'sglang-qwen.service' },
    );
    expect(d.verdict.class).toBe('kv_cache_oom');
    expect(d.lifetimes).toHaveLength(1);
    expect(d.lifetimes[0].pid).toBe(42);
    expect(d.inputs?.[0].formats.json).toBe(3);
  });
});
