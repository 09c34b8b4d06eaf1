// Live mode: argv arrays only; the unit journal is streamed through the diagnoser. A fake Host (no stream, exec
// fallback) checks the commands; a real LocalHost with stand-in `systemctl`/`journalctl` executables on PATH
// streams a 200k-line journal from a child process and proves that memory stays bounded.
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { collectLiveContext, diagnoseUnit } from '../../src/app/diagnose-live.js';
import { LocalHost } from '../../src/host/index.js';
import type { CommandResult, CommandStream, Host } from '../../src/host/types.js';

const FIX = join(import.meta.dirname, '../fixtures/journal/sglang');
const FLOOD = join(import.meta.dirname, '../fixtures/journal/flood.mjs');

// A Host that answers from a table keyed by argv prefix and records every call (no `stream`: exec fallback).
function fakeHost(replies: [string[], Partial<CommandResult>][]): Host & { calls: string[][] } {
  const calls: string[][] = [];
  return {
    name: 'root@llm-two',
    calls,
    async exec(argv) {
      calls.push(argv);
      const hit = replies.find(([prefix]) => prefix.every((p, i) => argv[i] === p));
      return {
        host: 'root@llm-two',
        argv,
        exitCode: 0,
        signal: null,
        timedOut: false,
        durationMs: 1,
        stdout: '',
        stderr: '',
        ...(hit?.[1] ?? { exitCode: 1, stderr: 'unexpected command' }),
      };
    },
    async readFile() {
      throw new Error('not used');
    },
    async writeFile() {
      throw new Error('not used');
    },
    async close() {},
  };
}

describe('diagnoseUnit (exec fallback)', () => {
  it('reads systemctl show, the kernel OOM lines and the unit journal, then diagnoses the crash loop', async () => {
    const kernelJson =
      '{"__REALTIME_TIMESTAMP":"1773095000000000","_TRANSPORT":"kernel","SYSLOG_IDENTIFIER":"kernel","MESSAGE":"usb 1-1: new high-speed USB device"}\n';
    const host = fakeHost([
      [
        ['systemctl', 'show', 'sglang-qwen.service'],
        { stdout: readFileSync(join(FIX, 'seed2-crash-loop-kv-oom/state.txt'), 'utf8') },
      ],
      [
        ['journalctl', '-u', 'sglang-qwen.service'],
        { stdout: readFileSync(join(FIX, 'seed2-crash-loop-kv-oom/journal.jsonl'), 'utf8') },
      ],
      [['journalctl', '-k'], { stdout: kernelJson }],
    ]);
    const d = await diagnoseUnit(host, { unit: 'sglang-qwen.service', since: '2 min ago' });
    expect(host.calls).toEqual([
      ['systemctl', 'show', 'sglang-qwen.service', '--no-pager'],
      ['journalctl', '-k', '-o', 'json', '--since', '2 min ago', '--no-pager'],
      ['journalctl', '-u', 'sglang-qwen.service', '-o', 'json', '--since', '2 min ago', '--no-pager'],
    ]);
    expect(d.verdict).toMatchObject({ class: 'crash_loop', cause: 'kv_cache_oom' });
    expect(d.verdict.summary).toContain('active (running)');
    expect(d.inputs?.map((i) => i.name)).toEqual(['root@llm-two:sglang-qwen.service']);
  });

  it('keeps only OOM/Xid kernel lines and ties a cgroup kill to the unit', async () => {
    const journal = readFileSync(join(FIX, 'exit-137-alone/journal.jsonl'), 'utf8');
    const oom = JSON.stringify({
      __REALTIME_TIMESTAMP: String(Date.UTC(2026, 2, 10, 9, 14, 0) * 1000),
      _TRANSPORT: 'kernel',
      SYSLOG_IDENTIFIER: 'kernel',
      MESSAGE:
        'Memory cgroup out of memory: Killed process 3109 (python3) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB',
    });
    const host = fakeHost([
      [['systemctl', 'show'], { stdout: 'Result=signal\nExecMainCode=2\nExecMainStatus=9\n' }],
      [['journalctl', '-u'], { stdout: journal }],
      [['journalctl', '-k'], { stdout: `{"MESSAGE":"eth0: link up","_TRANSPORT":"kernel"}\n${oom}\n` }],
    ]);
    const ctx = await collectLiveContext(host, 'sglang-qwen.service', '1 hour ago');
    expect(ctx.kernelLines.split('\n')).toHaveLength(1);
    const d = await diagnoseUnit(host, { unit: 'sglang-qwen.service', since: '1 hour ago' });
    expect(d.verdict).toMatchObject({ class: 'host_oom_kill', confidence: 'high' });
  });

  it('reports a missing unit with a coded error', async () => {
    const host = fakeHost([[['systemctl', 'show'], { stdout: 'Id=nope.service\nLoadState=not-found\n' }]]);
    await expect(diagnoseUnit(host, { unit: 'nope.service', since: '10 min ago' })).rejects.toMatchObject({
      code: 'E_UNIT_NOT_FOUND',
    });
  });

  it('tolerates a kernel log it may not read (non-root) and still diagnoses', async () => {
    const host = fakeHost([
      [['systemctl', 'show'], { stdout: 'Result=timeout\n' }],
      [['journalctl', '-u'], { stdout: readFileSync(join(FIX, 'seed1-stop-timeout/journal.jsonl'), 'utf8') }],
      [['journalctl', '-k'], { exitCode: 1, stderr: 'No journal files were opened due to insufficient permissions.' }],
    ]);
    expect((await diagnoseUnit(host, { unit: 'sglang-qwen.service', since: '10 min ago' })).verdict.class).toBe(
      'stop_timeout',
    );
  });

  it('says so when the window has no journal entries', async () => {
    const host = fakeHost([
      [['systemctl', 'show'], { stdout: 'ActiveState=active\n' }],
      [['journalctl'], { stdout: '\n' }],
    ]);
    await expect(diagnoseUnit(host, { unit: 'sglang-qwen.service', since: '1 min ago' })).rejects.toMatchObject({
      code: 'E_INPUT_UNUSABLE',
    });
  });

  it('fails with a coded error when journalctl -u fails', async () => {
    const host = fakeHost([
      [['systemctl', 'show'], { stdout: 'ActiveState=active\n' }],
      [['journalctl', '-k'], {}],
      [['journalctl', '-u'], { exitCode: 1, stderr: 'Failed to add filter' }],
    ]);
    await expect(diagnoseUnit(host, { unit: 'sglang-qwen.service', since: '1 min ago' })).rejects.toMatchObject({
      code: 'E_REMOTE_COMMAND',
    });
  });
});

/** Lines of the generated journal, and the bound its diagnosis must stay within (the journal is ~120 MB). */
const FLOOD_LINES = 200_000;
const MAX_RETAINED_GROWTH_BYTES = 24 * 1024 * 1024;
/** Force a full GC and sample retained memory every this many streamed bytes. */
const SAMPLE_EVERY_BYTES = 8 * 1024 * 1024;

// Full garbage collection on demand (V8's gc exposed at run time), so samples show retained memory, not garbage.
function exposeGc(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

// Heap plus buffers still reachable.
function retained(gc: () => void): number {
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

// This machine, with a tap on streamed stdout that measures retained memory while the diagnoser consumes it.
class MeasuredLocalHost extends LocalHost {
  peak = 0;
  streamedBytes = 0;
  constructor(private readonly gc: () => void) {
    super();
  }

  override stream(argv: string[]): CommandStream {
    const s = super.stream(argv);
    let next = SAMPLE_EVERY_BYTES;
    const tap = new Transform({
      transform: (chunk: Buffer, _enc, cb) => {
        this.streamedBytes += chunk.length;
        if (this.streamedBytes >= next) {
          next += SAMPLE_EVERY_BYTES;
          this.peak = Math.max(this.peak, retained(this.gc));
        }
        cb(null, chunk);
      },
    });
    return { ...s, stdout: s.stdout.pipe(tap) };
  }
}

describe('diagnoseUnit streaming through a real child process (LocalHost)', () => {
  let bin = '';
  const savedPath = process.env.PATH;
  beforeAll(() => {
    bin = mkdtempSync(join(tmpdir(), 'spectune-live-'));
    const script = (name: string, body: string) => {
      writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`);
      chmodSync(join(bin, name), 0o755);
    };
    script(
      'systemctl',
      'printf "Id=sglang-qwen.service\\nLoadState=loaded\\nActiveState=failed\\nResult=timeout\\nExecMainCode=2\\nExecMainStatus=9\\n"',
    );
    script(
      'journalctl',
      `case "$1" in -k) echo '{"_TRANSPORT":"kernel","MESSAGE":"eth0: link up"}';; -u) exec "${process.execPath}" "${FLOOD}" ${FLOOD_LINES} 2>/dev/null;; *) exit 2;; esac`,
    );
    process.env.PATH = `${bin}:${savedPath}`;
  });
  afterAll(() => {
    process.env.PATH = savedPath;
    rmSync(bin, { recursive: true, force: true });
  });

  it(`diagnoses a ${FLOOD_LINES}-line journal (~120 MB) right, with retained memory bounded`, async () => {
    const gc = exposeGc();
    const host = new MeasuredLocalHost(gc);
    const before = retained(gc);
    const d = await diagnoseUnit(host, { unit: 'sglang-qwen.service', since: '1 day ago' });
    const served = FLOOD_LINES - 14;
    expect(d.inputs?.[0].lines).toBe(FLOOD_LINES);
    expect(d.verdict).toMatchObject({ class: 'stop_timeout', confidence: 'high' });
    expect(d.verdict.facts).toMatchObject({ requests_served: served - Math.floor(served / 5), remaining_requests: 3 });
    expect(d.lifetimes).toHaveLength(1);
    expect(host.streamedBytes).toBeGreaterThan(100 * 1024 * 1024);
    expect(host.peak - before, `peak retained growth ${((host.peak - before) / 2 ** 20).toFixed(1)} MiB`).toBeLessThan(
      MAX_RETAINED_GROWTH_BYTES,
    );
  }, 60_000);

  it('fails with a coded error when the stream stalls', async () => {
    process.env.PATH = `${bin}:${savedPath}`;
    writeFileSync(join(bin, 'journalctl'), '#!/bin/sh\ncase "$1" in -k) exit 0;; *) echo "{}"; exec sleep 30;; esac\n');
    const t0 = Date.now();
    await expect(
      diagnoseUnit(new LocalHost(), { unit: 'sglang-qwen.service', since: '1 min ago', idleMs: 300 }),
    ).rejects.toMatchObject({ code: 'E_TIMEOUT' });
    expect(Date.now() - t0).toBeLessThan(5000);
  });
});
