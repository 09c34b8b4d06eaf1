// The pure parts of init and doctor: discovery parsing, unit choice, start-up measurement, the YAML writer and
// every check's judgement (each with the case that must not pass).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import type { ToolError } from '../errors.js';
import {
  chooseUnit,
  describeCommand,
  filterEngineLike,
  formatChecks,
  judgeApiKey,
  judgeClockSkew,
  judgeDropIn,
  judgeEngine,
  judgeJournal,
  judgeStartup,
  judgeStopTimeout,
  judgeStoreDisk,
  measureStartups,
  parseRunningUnits,
  proposeConfig,
  readVersion,
  recommendedStopSec,
  renderYaml,
  summarizeChecks,
  type EngineUnit,
} from './index.js';

// A unit as init would describe it from an ExecStart line.
function unit(name: string, exec: string): EngineUnit {
  return describeCommand(name, 'systemd', exec, {})!;
}

// The error a call throws.
function thrown(f: () => unknown): ToolError {
  try {
    f();
  } catch (e) {
    return e as ToolError;
  }
  throw new Error('did not throw');
}

describe('discovery', () => {
  it('reads running unit names and keeps only engine-like commands for a closer look', () => {
    const list =
      'ssh.service loaded active running OpenBSD Secure Shell server\nsglang-qwen.service loaded active running SGLang\n\n';
    expect(parseRunningUnits(list)).toEqual(['ssh.service', 'sglang-qwen.service']);
    const show = [
      'Id=ssh.service\nExecStart={ path=/usr/sbin/sshd ; argv[]=/usr/sbin/sshd -D ; ignore_errors=no }',
      'Id=sglang-qwen.service\nExecStart={ path=/usr/bin/python3 ; argv[]=/usr/bin/python3 -m sglang.launch_server --port 30000 ; ignore_errors=no }',
      'Id=sim.service\nExecStart={ path=/usr/local/bin/node ; argv[]=/usr/local/bin/node /opt/spectune/bin/spectune.js sim --port 1 ; }',
      'Id=wrapped.service\nExecStart={ path=/bin/bash ; argv[]=/bin/bash -c exec llama-server -m x ; }',
    ].join('\n\n');
    expect(filterEngineLike(show)).toEqual(['sglang-qwen.service', 'sim.service', 'wrapped.service']);
  });

  it('reads the simulator unit as SGLang with its model, port and speculative settings', () => {
    const u = unit(
      'sim.service',
      '/usr/local/bin/node /opt/spectune/bin/spectune.js sim --model-path Qwen/Qwen3.5-122B-A10B --port 31900 --speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 --api-key sk-secret',
    );
    expect(u).toMatchObject({
      engine: 'sglang',
      model: 'Qwen/Qwen3.5-122B-A10B',
      port: 31900,
      speculativeEnabled: true,
      apiKeySet: true,
    });
    expect(u.speculative).toMatchObject({
      speculative_algorithm: 'EAGLE',
      speculative_num_steps: 3,
      speculative_eagle_topk: 1,
      speculative_num_draft_tokens: 4,
    });
    // The key is never copied into the proposal: the config names a variable to hold it.
    const yaml = proposeConfig({
      host: 'th1',
      endpointHost: '10.0.0.2',
      unit: u,
      startup: null,
      timeoutStopMs: 90_000,
      others: [],
      generatedAt: 'T',
    }).yaml;
    expect(yaml).not.toContain('sk-secret');
    expect(parseYaml(yaml).target.apiKeyEnv).toBe('SPECTUNE_API_KEY');
  });

  it('picks the only unit, lists several, and names the fix when there is none', () => {
    const a = unit('a.service', 'python3 -m sglang.launch_server --port 30000');
    const b = unit('b.service', 'vllm serve m --port 8000');
    expect(chooseUnit([a], undefined, 'gpu1')).toBe(a);
    const several = thrown(() => chooseUnit([a, b], undefined, 'gpu1'));
    expect([several.code, several.message, several.hint]).toEqual([
      'E_USAGE',
      'gpu1: 2 engine units are running: a.service (sglang), b.service (vllm)',
      'pick one with --unit, e.g. --unit a.service',
    ]);
    expect(chooseUnit([a, b], 'b', 'gpu1')).toBe(b);
    expect(thrown(() => chooseUnit([a], 'c', 'gpu1')).message).toBe('gpu1: no running engine unit named c.service');
    const none = thrown(() => chooseUnit([], undefined, 'gpu1'));
    expect(none.message).toBe('gpu1: no running systemd unit starts SGLang, vLLM or llama-server');
    expect(none.hint).toMatch(/--unit NAME/);
    const docker = { ...b, source: 'docker' as const, compose: 'llm/vllm' };
    expect(thrown(() => chooseUnit([docker], undefined, 'gpu1')).message).toBe(
      'b.service runs vllm in docker (compose llm/vllm): spectune tunes systemd units',
    );
  });
});

describe('start-up time from the journal', () => {
  const rec = (s: number, identifier: string, message: string) => ({ realtimeUs: s * 1e6, identifier, message });
  const ready = /The server is fired up and ready to roll!/;

  it('measures each start from the systemd start line to the ready line; a crashed start does not count', () => {
    const r = measureStartups(
      [
        rec(100, 'systemd', 'Starting sglang.service - SGLang...'),
        rec(101, 'python3', 'server_args=ServerArgs(...)'),
        rec(193, 'python3', '[2026-03-09 22:00:00] The server is fired up and ready to roll!'),
        rec(300, 'python3', 'ValueError: Not enough memory'),
        rec(301, 'systemd', 'sglang.service: Main process exited, code=exited, status=1/FAILURE'),
        rec(302, 'systemd', 'Started sglang.service - SGLang.'),
        rec(420, 'python3', 'The server is fired up and ready to roll!'),
        rec(500, 'systemd', 'Started sglang.service - SGLang.'),
        rec(510, 'python3', 'Load weight end.'),
      ],
      ready,
    );
    expect(r.last).toMatchObject({ startUs: 302e6, seconds: 118 });
    expect(r.longest?.seconds).toBe(118);
    expect(r.starts).toBe(3);
    expect(r.pending).toBe(true);
  });

  it('a window that starts mid-life measures from its first engine line; no ready line means no figure', () => {
    expect(
      measureStartups(
        [
          rec(10, 'llama-server', 'build: 1 (abc)'),
          rec(12, 'llama-server', 'main: server is listening on http://0.0.0.0:8080'),
        ],
        /listening on/,
      ).last?.seconds,
    ).toBe(2);
    expect(measureStartups([rec(10, 'systemd', 'Started x.service.'), rec(12, 'x', 'loading')], ready)).toMatchObject({
      last: null,
      pending: true,
    });
  });
});

describe('commented YAML', () => {
  it('round-trips through a YAML parser with comments above keys and flow leaves', () => {
    const text = renderYaml(['head'], {
      a: { comment: ['why a'], value: { b: 'x: y', c: [1, 2], d: { min: 1, max: 3 }, e: 'true', f: '90%' } },
      list: [{ host: 'root@h', unit: 'u.service' }, { x: { y: 1, z: [true] } }],
    });
    expect(text).toContain('# why a\na:\n');
    expect(text).toContain('  d: { min: 1, max: 3 }');
    expect(parseYaml(text)).toEqual({
      a: { b: 'x: y', c: [1, 2], d: { min: 1, max: 3 }, e: 'true', f: '90%' },
      list: [{ host: 'root@h', unit: 'u.service' }, { x: { y: 1, z: [true] } }],
    });
  });
});

describe('doctor judgements', () => {
  const subject = 'th1 x.service';

  it('TimeoutStopSec: the systemd default 90 s is too short for a 256-token request at the conservative ITL (the seed-1 trap)', () => {
    expect(recommendedStopSec(256, 200)).toBe(100);
    const base = { unit: 'x.service', outputTokens: 256, itlMs: null };
    const short = judgeStopTimeout(subject, { ...base, timeoutStopMs: 90_000 });
    expect(short.status).toBe('WARN');
    expect(short.fix).toBe(
      'raise it: `systemctl edit x.service` → [Service] TimeoutStopSec=100s, or pass --timeout-stop-sec 100 to spectune apply',
    );
    expect(judgeStopTimeout(subject, { ...base, timeoutStopMs: 120_000 }).status).toBe('PASS');
    expect(judgeStopTimeout(subject, { ...base, timeoutStopMs: Infinity }).status).toBe('PASS');
    // A measured ITL of 20 ms needs only 30 s.
    expect(judgeStopTimeout(subject, { ...base, itlMs: 20, timeoutStopMs: 30_000 })).toMatchObject({
      status: 'PASS',
      facts: { recommendedSec: 30, itlMeasured: true },
    });
    expect(judgeStopTimeout(subject, { ...base, timeoutStopMs: null }).status).toBe('WARN');
  });

  it("TimeoutStopSec from the engine's measurement: its decode rate at a full batch, and the drain of what is in flight now", () => {
    const base = { unit: 'x.service', outputTokens: 3000, itlMs: null };
    // 1365 tok/s over a batch of up to 16: 12 ms per token per request; 3000 tokens → 36 s + 10 s, × 1.5 → 70 s.
    const idle = judgeStopTimeout(subject, {
      ...base,
      timeoutStopMs: 22_000,
      load: { running: 1, queued: 0, genThroughput: 1365, maxRunning: 16 },
    });
    expect(idle).toMatchObject({ status: 'WARN', facts: { itlMs: 12, itlMeasured: true, recommendedSec: 70 } });
    expect(idle.summary).toContain(
      '3000 output tokens × 12 ms ITL (measured by the engine: 1365 tok/s over a batch of up to 16)',
    );
    // The case in flight: 16 requests of up to 3,000 tokens at 1365 tok/s need ~41 s; TimeoutStopSec=22 is refused.
    const busy = judgeStopTimeout(subject, {
      ...base,
      timeoutStopMs: 22_000,
      load: { running: 16, queued: 0, genThroughput: 1365, maxRunning: 16 },
    });
    expect(busy.status).toBe('WARN');
    expect(busy.facts).toMatchObject({ drainNowSec: 41 });
    expect(busy.summary).toContain('now in flight: ~41 s to drain (16 requests, up to 3000 tokens left each (assumed');
    expect(busy.summary).toContain('→ TimeoutStopSec=71 (×1.5 margin + 10 s teardown)');
    expect(busy.fix).toContain('TimeoutStopSec=71s');
    // An idle engine with no decode rate measures nothing: the conservative ITL stays.
    expect(
      judgeStopTimeout(subject, {
        ...base,
        timeoutStopMs: 22_000,
        load: { running: 0, queued: 0, genThroughput: 0, maxRunning: 16 },
      }).facts,
    ).toMatchObject({ itlMs: 200, itlMeasured: false });
  });

  it('start-up: within half the deadline passes, beyond it warns, beyond the deadline fails, unknown warns', () => {
    const t = (s: number) => ({ startUs: 0, readyUs: s * 1e6, seconds: s, readyLine: 'ready' });
    const r = (s: number) => ({ last: t(s), longest: t(s), starts: 1, pending: false });
    expect(judgeStartup(subject, r(93), 1_200_000).status).toBe('PASS');
    expect(judgeStartup(subject, r(700), 1_200_000)).toMatchObject({
      status: 'WARN',
      fix: 'raise benchmark.timeouts.ready to 24m',
    });
    expect(judgeStartup(subject, r(1300), 1_200_000).status).toBe('FAIL');
    expect(judgeStartup(subject, null, 1_200_000).status).toBe('WARN');
  });

  it('store disk, clock skew, journal, drop-in rights and engine health', () => {
    expect(judgeStoreDisk('here', { dir: '/x', freeBytes: 50 * 1024 ** 3, writable: true }).status).toBe('PASS');
    expect(judgeStoreDisk('here', { dir: '/x', freeBytes: 500 * 1024 ** 2, writable: true }).status).toBe('WARN');
    expect(judgeStoreDisk('here', { dir: '/x', freeBytes: 10 * 1024 ** 2, writable: true }).status).toBe('FAIL');
    expect(judgeStoreDisk('here', { dir: '/x', freeBytes: 50 * 1024 ** 3, writable: false }).status).toBe('FAIL');
    expect(
      judgeClockSkew([
        { host: 'a', offsetMs: 10 },
        { host: 'b', offsetMs: 120 },
      ]),
    ).toMatchObject({ status: 'PASS', facts: { skewMs: 110 } });
    expect(
      judgeClockSkew([
        { host: 'a', offsetMs: 0 },
        { host: 'b', offsetMs: 2000 },
      ]).status,
    ).toBe('WARN');
    expect(
      judgeClockSkew([
        { host: 'a', offsetMs: -4000 },
        { host: 'b', offsetMs: 2000 },
      ]).status,
    ).toBe('FAIL');
    expect(judgeClockSkew([{ host: 'a', offsetMs: 0 }]).status).toBe('SKIP');
    expect(judgeJournal(subject, { denied: true, records: 0, error: 'x' }, 'join systemd-journal')).toMatchObject({
      status: 'FAIL',
      fix: 'join systemd-journal',
    });
    expect(judgeJournal(subject, { denied: false, records: 0, error: null }, '').status).toBe('WARN');
    expect(judgeJournal(subject, { denied: false, records: 1, error: null }, '').status).toBe('PASS');
    const dirs = { unitDir: '/etc/systemd/system', stateDir: '/var/lib' };
    expect(judgeDropIn(subject, { ...dirs, unitDirWritable: true, stateDirWritable: true }, 'root').status).toBe(
      'PASS',
    );
    expect(judgeDropIn(subject, { ...dirs, unitDirWritable: false, stateDirWritable: true }, 'root')).toMatchObject({
      status: 'FAIL',
      summary: 'cannot write /etc/systemd/system (the drop-in and its kept versions go there)',
    });
    const e = {
      engine: 'sglang' as const,
      healthUrl: 'http://h:1/health',
      healthError: null,
      version: '0.5.2',
      detectedEngine: 'sglang' as const,
    };
    expect(judgeEngine(subject, { ...e, healthStatus: 200 })).toMatchObject({
      status: 'PASS',
      summary: 'sglang 0.5.2 healthy (GET http://h:1/health → 200)',
    });
    expect(judgeEngine(subject, { ...e, healthStatus: 503 }).status).toBe('FAIL');
    expect(judgeEngine(subject, { ...e, healthStatus: null, healthError: 'ECONNREFUSED' }).summary).toMatch(
      /ECONNREFUSED/,
    );
    expect(judgeEngine(subject, { ...e, healthStatus: 200, detectedEngine: 'vllm' }).status).toBe('FAIL');
    expect(readVersion({ path: '/props', field: 'build_info' }, '{"build_info":"b6123-abc"}')).toBe('b6123-abc');
    expect(readVersion({ path: '/version', field: 'version' }, 'not json')).toBeNull();
  });

  it('exit 1 only when something FAILs; the report puts the fix under each non-PASS line', () => {
    const pass = judgeJournal(subject, { denied: false, records: 1, error: null }, '');
    const warn = judgeJournal(subject, { denied: false, records: 0, error: null }, '');
    const fail = judgeJournal(subject, { denied: true, records: 0, error: null }, 'add the user to systemd-journal');
    expect(summarizeChecks([pass, warn]).exitCode).toBe(0);
    expect(summarizeChecks([pass, fail]).exitCode).toBe(1);
    const text = formatChecks([pass, fail]);
    expect(text).toContain('FAIL  journal       th1 x.service: not allowed to read the system journal');
    expect(text).toContain('fix: add the user to systemd-journal');
    expect(text).toContain('doctor: 1 passed, 0 warnings, 1 failed');
  });
});

describe('onboard core purity', () => {
  it('imports no I/O module and never reads the clock', () => {
    const dir = import.meta.dirname;
    const forbidden = [
      /from 'node:(?:fs|fs\/promises|child_process|net|http|https|os)'/,
      /\bDate\.now\(/,
      /new Date\(\)/,
      /process\.(?:env|hrtime)/,
    ];
    const files = readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));
    expect(
      files.flatMap((f) =>
        forbidden.filter((re) => re.test(readFileSync(join(dir, f), 'utf8'))).map((re) => `${f}: ${re.source}`),
      ),
    ).toEqual([]);
  });
});

describe('judgeApiKey: doctor checks the key spectune will send', () => {
  const f = {
    url: 'http://h:1/v1/models',
    sent: false,
    source: 'no key ($SPECTUNE_API_KEY is not set)',
    fix: "export SPECTUNE_API_KEY=<the value of the unit's --api-key> before running spectune",
  };
  it('a 401 without a key or a 403 with a wrong one is a FAIL with the variable to set', () => {
    expect(judgeApiKey('s', { ...f, status: 401 })).toMatchObject({
      id: 'api-key',
      status: 'FAIL',
      summary:
        'the engine wants an API key and spectune has no key ($SPECTUNE_API_KEY is not set) (GET http://h:1/v1/models → 401): every benchmark request would fail',
      fix: f.fix,
    });
    expect(judgeApiKey('s', { ...f, status: 403, sent: true, source: '$K (target.apiKeyEnv)' })).toMatchObject({
      status: 'FAIL',
      summary: 'the engine refuses the key spectune sends, from $K (target.apiKeyEnv) (GET http://h:1/v1/models → 403)',
    });
  });
  it('a 200 passes (with or without a key); no answer is a WARN', () => {
    expect(judgeApiKey('s', { ...f, status: 200, sent: true, source: '$K' }).summary).toBe(
      'the engine accepts the key from $K (GET http://h:1/v1/models → 200)',
    );
    expect(judgeApiKey('s', { ...f, status: 200 }).summary).toBe(
      'the engine asks for no API key (GET http://h:1/v1/models → 200)',
    );
    expect(judgeApiKey('s', { ...f, status: null }).status).toBe('WARN');
  });
});
