// The one journal model: journal JSON read once into entries that keep their fields (cursor, time with its year,
// host, unit, transport), text parsed into the same entry type, and diagnose reading entries as they are — so an
// entry from another unit or from the kernel transport is attributed right, and a journal crossing New Year orders right.
import { describe, expect, it } from 'vitest';
import { renderShort } from '../service/journal.js';
import { renderNcclWatchdog } from '../sim/traceback.js';
import { diagnoseLogs, parseJournalJson, parseLine, type JournalEntry } from './index.js';

const UNIT = 'sglang-qwen.service';

// One `journalctl -o json` line as journald writes it for the service's stdout, PID 1, or the kernel.
function jsonLine(
  us: number,
  msg: string,
  o: { pid?: number; unit?: string; host?: string; who?: 'app' | 'systemd' | 'kernel' } = {},
): string {
  const who = o.who ?? 'app';
  const base = {
    __CURSOR: `s=ab;i=${us.toString(16)}`,
    __REALTIME_TIMESTAMP: String(us),
    _HOSTNAME: o.host ?? 'gpu1',
    MESSAGE: msg,
  };
  if (who === 'kernel') return JSON.stringify({ ...base, _TRANSPORT: 'kernel', PRIORITY: '3' });
  if (who === 'systemd')
    return JSON.stringify({
      ...base,
      _PID: '1',
      SYSLOG_IDENTIFIER: 'systemd',
      _SYSTEMD_UNIT: 'init.scope',
      UNIT: o.unit ?? UNIT,
      _TRANSPORT: 'journal',
    });
  return JSON.stringify({
    ...base,
    _PID: String(o.pid ?? 4242),
    SYSLOG_IDENTIFIER: 'python3',
    _SYSTEMD_UNIT: o.unit ?? UNIT,
    _TRANSPORT: 'stdout',
  });
}

// Epoch µs of a UTC date.
const us = (y: number, mo: number, d: number, h: number, mi: number, s: number) =>
  Date.UTC(y, mo - 1, d, h, mi, s) * 1000;

describe('journal entries', () => {
  it('keep every field of journal JSON: cursor, time with its year, host, identifier, pid, unit, transport', () => {
    const t = us(2026, 12, 31, 23, 59, 59);
    const [app, sys, kern] = parseJournalJson(
      [
        jsonLine(t, 'Load weight begin.'),
        jsonLine(t + 1, `${UNIT}: Main process exited, code=killed, status=9/KILL`, { who: 'systemd' }),
        jsonLine(t + 2, 'Out of memory: Killed process 4242 (python3)', { who: 'kernel' }),
        '{"truncated":',
        'not json',
      ].join('\n'),
    );
    expect(app).toMatchObject({
      format: 'json',
      cursor: `s=ab;i=${t.toString(16)}`,
      realtimeUs: t,
      hostname: 'gpu1',
      identifier: 'python3',
      pid: 4242,
      unit: UNIT,
      transport: 'stdout',
      origin: 'app',
      message: 'Load weight begin.',
    });
    expect(new Date(app.realtimeUs! / 1000).getUTCFullYear()).toBe(2026);
    expect(sys).toMatchObject({ identifier: 'systemd', pid: 1, unit: UNIT, transport: 'journal', origin: 'systemd' });
    expect(kern).toMatchObject({ identifier: null, pid: null, transport: 'kernel', origin: 'kernel' });
    expect(parseJournalJson('{"truncated":\nnot json\n')).toEqual([]);
  });

  it('text parses into the same entry type (what the text carries; no year, no cursor)', () => {
    const e: JournalEntry = parseLine('Dec 31 23:59:59 gpu1 python3[4242]: Load weight begin.');
    expect(e).toEqual({
      format: 'journal',
      ts: 'Dec 31 23:59:59',
      realtimeUs: null,
      cursor: null,
      hostname: 'gpu1',
      identifier: 'python3',
      pid: 4242,
      unit: null,
      transport: null,
      origin: 'app',
      message: 'Load weight begin.',
    });
    expect(parseLine('Dec 31 23:59:59 gpu1 kernel: Out of memory: Killed process 4242 (python3)')).toMatchObject({
      transport: 'kernel',
      origin: 'kernel',
      hostname: 'gpu1',
    });
    expect(parseLine('RuntimeError: boom')).toMatchObject({
      format: 'plain',
      hostname: null,
      identifier: null,
      origin: 'app',
      message: 'RuntimeError: boom',
    });
  });

  it('attribute a fatal line of another unit to that unit, not to the one diagnosed', () => {
    const t = us(2026, 3, 9, 8, 0, 0);
    const entries = parseJournalJson(
      [
        jsonLine(t, '[2026-03-09 08:00:00] The server is fired up and ready to roll!'),
        // A neighbour's crash that `journalctl -u` can bring along (e.g. a helper unit matched by the same filter).
        jsonLine(t + 1e6, 'RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.', {
          pid: 777,
          unit: 'sglang-other.service',
        }),
        jsonLine(t + 2e6, `${UNIT}: Main process exited, code=killed, status=9/KILL`, { who: 'systemd' }),
      ].join('\n'),
    );
    const fromEntries = diagnoseLogs([{ name: 'journal', entries }], { unit: UNIT, engine: 'sglang' });
    expect(fromEntries.verdict.class).not.toBe('kv_cache_oom');
    expect(JSON.stringify(fromEntries.verdict.evidence)).not.toContain('Not enough memory');
    // The same journal through short text has lost the unit: the neighbour's line is taken as the service's.
    const fromText = diagnoseLogs([{ name: 'journal', content: renderShort(entries) }], {
      unit: UNIT,
      engine: 'sglang',
    });
    expect(fromText.verdict.class).toBe('kv_cache_oom');
  });

  it("attribute a kernel-transport entry to the kernel (the OOM killer named the service's process)", () => {
    const t = us(2026, 3, 10, 10, 0, 0);
    const entries = parseJournalJson(
      [
        jsonLine(t, '[2026-03-10 10:00:00] The server is fired up and ready to roll!', { pid: 999 }),
        jsonLine(
          t + 299e6,
          'Out of memory: Killed process 999 (python3) total-vm:1kB, anon-rss:1kB, file-rss:0kB, shmem-rss:0kB',
          { who: 'kernel' },
        ),
        jsonLine(t + 300e6, `${UNIT}: Main process exited, code=killed, status=9/KILL`, { who: 'systemd' }),
      ].join('\n'),
    );
    expect(entries[1].origin).toBe('kernel');
    const d = diagnoseLogs([{ name: 'journal', entries }], { unit: UNIT });
    expect(d.verdict.class).toBe('host_oom_kill');
    expect(d.timeline.some((t) => t.kind === 'oom_kill')).toBe(true);
    // Through short text the kernel entry (no SYSLOG_IDENTIFIER) is a line of the service's own: no OOM-killer record.
    const fromText = diagnoseLogs([{ name: 'journal', content: renderShort(entries) }], { unit: UNIT });
    expect(fromText.timeline.some((t) => t.kind === 'oom_kill')).toBe(false);
  });

  it("order a two-rank failure across New Year by the entries' full times (rank0 died first, rank1 is its echo)", () => {
    const die = us(2026, 12, 31, 23, 59, 58);
    const rank0 = parseJournalJson(
      [
        jsonLine(die - 60e6, 'Load weight end. type=X, dtype=torch.bfloat16, avail mem=3.00 GB, mem usage=60.00 GB.', {
          host: 'gpu1',
        }),
        jsonLine(
          die,
          'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity of 80 GiB',
          { host: 'gpu1' },
        ),
        jsonLine(die + 1e6, `${UNIT}: Main process exited, code=killed, status=9/KILL`, {
          who: 'systemd',
          host: 'gpu1',
        }),
      ].join('\n'),
    );
    const echo = die + 4e6; // 2027-01-01 00:00:02
    const rank1 = parseJournalJson(
      [
        jsonLine(die - 60e6, 'Load weight end. type=X, dtype=torch.bfloat16, avail mem=3.00 GB, mem usage=60.00 GB.', {
          host: 'gpu2',
        }),
        ...renderNcclWatchdog(1, 12_345, 600_000, 600_081, '0101 00:00:02.000000 123').map((l) =>
          jsonLine(echo, l, { host: 'gpu2' }),
        ),
        jsonLine(echo + 1e6, `${UNIT}: Main process exited, code=dumped, status=6/ABRT`, {
          who: 'systemd',
          host: 'gpu2',
        }),
      ].join('\n'),
    );
    expect(new Date(rank1[1].realtimeUs! / 1000).toISOString()).toBe('2027-01-01T00:00:02.000Z');
    const actions = [
      { ts: '2026-12-31T23:58:00Z', action: 'restart', unit: UNIT, by: 'spectune', host: 'gpu1', why: 'trial' },
    ];
    const inputs = [
      { name: 'journal:gpu2', entries: rank1 },
      { name: 'journal:gpu1', entries: rank0 },
    ];
    const d = diagnoseLogs(inputs, { unit: UNIT, engine: 'sglang', actions });
    expect(d.verdict.class).toBe('cuda_oom');
    expect(d.verdict.evidence[0]).toMatchObject({ source: 'journal:gpu1' });
    // Short text drops the year: "Jan 01" (taken as this year's) sorts before "Dec 31", and the echo wins.
    const text = diagnoseLogs(
      inputs.map((i) => ({ name: i.name, content: renderShort(i.entries) })),
      { unit: UNIT, engine: 'sglang', actions },
    );
    expect(text.verdict.evidence[0]).toMatchObject({ source: 'journal:gpu2' });
  });
});
