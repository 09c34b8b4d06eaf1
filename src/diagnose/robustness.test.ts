// Parser robustness: any chunking, CRLF, invalid UTF-8, huge lines, truncated JSON, interleaved processes —
// never a crash, never a dropped line, and the same verdict as the clean input.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDiagnoser, diagnoseLogs, findFatalLine } from './index.js';
import { createLineSplitter } from './lines.js';
import type { Diagnosis } from './types.js';

const FIX = join(import.meta.dirname, '../../test/fixtures/journal');
const seed1 = readFileSync(join(FIX, 'sglang/seed1-stop-timeout/journal.jsonl'));
const seed2 = readFileSync(join(FIX, 'sglang/seed2-crash-loop-kv-oom/journal.txt'));
const vllmCrash = readFileSync(join(FIX, 'vllm/cuda-graph-capture-oom/journal.txt'), 'utf8');

// Deterministic pseudo-random numbers (mulberry32) so failures reproduce.
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Diagnose a buffer pushed in the given chunk sizes.
function inChunks(buf: Buffer, sizes: () => number): Diagnosis {
  const d = createDiagnoser();
  for (let i = 0; i < buf.length; ) {
    const n = Math.max(1, sizes());
    d.push('in', buf.subarray(i, i + n));
    i += n;
  }
  return d.finish();
}

// The parts of a diagnosis that must not depend on how the input was delivered.
function essence(d: Diagnosis) {
  return {
    verdict: d.verdict,
    root: d.rootException,
    timeline: d.timeline,
    lifetimes: d.lifetimes,
    lines: d.inputs?.[0].lines,
  };
}

// Lines a splitter emits for the given chunks.
function splitAll(chunks: (Buffer | string)[]): string[] {
  const out: string[] = [];
  const s = createLineSplitter((l) => out.push(l));
  for (const c of chunks) s.push(c);
  s.end();
  return out;
}

describe('chunk boundaries', () => {
  const whole = essence(diagnoseLogs([{ name: 'in', content: seed1 }]));
  it('gives the same diagnosis for random chunk sizes (50 splits)', () => {
    const r = rng(7);
    for (let k = 0; k < 50; k++) expect(essence(inChunks(seed1, () => Math.floor(r() * 700)))).toEqual(whole);
  });
  it('gives the same diagnosis byte by byte', () => {
    expect(essence(inChunks(seed1, () => 1))).toEqual(whole);
  });
  it('keeps a multi-byte character split across chunks', () => {
    const euro = Buffer.from('a€b\n');
    expect(splitAll([euro.subarray(0, 2), euro.subarray(2, 3), euro.subarray(3)])).toEqual(['a€b']);
  });
});

describe('line endings and bytes', () => {
  it('reads CRLF input like LF input', () => {
    const crlf = Buffer.from(seed2.toString('utf8').replace(/\n/g, '\r\n'));
    const a = diagnoseLogs([{ name: 'in', content: seed2 }]);
    const b = diagnoseLogs([{ name: 'in', content: crlf }]);
    expect(essence(b)).toEqual(essence(a));
    expect(b.verdict.evidence.every((e) => !e.text.endsWith('\r'))).toBe(true);
  });
  it('survives invalid UTF-8 without dropping the line', () => {
    const text = seed2.toString('utf8').trimEnd().split('\n');
    const parts = text.map((l, i) =>
      Buffer.concat([
        Buffer.from(l),
        i === 5 || i === 120 ? Buffer.from([0xff, 0xfe, 0xe2, 0x82]) : Buffer.alloc(0),
        Buffer.from('\n'),
      ]),
    );
    const d = diagnoseLogs([{ name: 'in', content: Buffer.concat(parts) }]);
    expect(d.inputs?.[0].lines).toBe(text.length);
    expect(d.verdict.class).toBe('crash_loop');
  });
  it('keeps a 1 MB single line whole and still diagnoses around it', () => {
    const big = `Mar 09 22:36:00 llm-two sglang-qwen[20110]: ${'x'.repeat(1 << 20)}`;
    const lines = seed2.toString('utf8').split('\n');
    lines.splice(10, 0, big);
    const content = lines.join('\n');
    expect(splitAll([content]).find((l) => l.length > 1 << 20)?.length).toBe(big.length);
    const d = diagnoseLogs([{ name: 'in', content }]);
    expect(d.inputs?.[0].lines).toBe(lines.length - 1);
    expect(d.verdict.cause).toBe('kv_cache_oom');
  });
});

describe('damaged and mixed input', () => {
  it('reads truncated JSON lines as plain text instead of failing', () => {
    const lines = seed1.toString('utf8').trimEnd().split('\n');
    const damaged = lines.map((l, i) => (i % 9 === 4 ? l.slice(0, Math.floor(l.length / 2)) : l)).join('\n');
    const d = diagnoseLogs([{ name: 'in', content: damaged }]);
    expect(d.inputs?.[0].lines).toBe(lines.length);
    expect(d.inputs?.[0].formats.plain).toBe(lines.filter((_, i) => i % 9 === 4).length);
    expect(d.verdict.class).toBe('stop_timeout');
  });
  it('reassembles a vLLM traceback interleaved line by line with another process', () => {
    const lines = vllmCrash.trimEnd().split('\n');
    const mixed: string[] = [];
    for (const [i, l] of lines.entries()) {
      mixed.push(l);
      mixed.push(
        `Apr 02 14:00:${String(i % 60).padStart(2, '0')} llm-two vllm[5107]: (Worker_TP1 pid=5301) INFO 04-02 14:00:00 [gpu_worker.py:1] worker heartbeat ${i}`,
      );
    }
    const d = diagnoseLogs([{ name: 'in', content: mixed.join('\n') }]);
    expect(d.verdict.class).toBe('cuda_graph_capture_failure');
    expect(d.rootException?.type).toBe('torch.OutOfMemoryError');
    expect(d.rootException?.frames.map((f) => f.func)).toEqual(
      expect.arrayContaining(['run_engine_core', 'capture_model', '_dummy_run']),
    );
    expect(d.inputs?.[0].lines).toBe(mixed.length);
  });
  it('counts every line of every source, including empty and meta lines', () => {
    const d = diagnoseLogs([
      { name: 'a', content: '-- Boot 6c7c6013a8cc4afb9b7ed1234c11e6d1 --\n\n' + seed2.toString('utf8') },
      { name: 'b', content: 'no newline at end' },
    ]);
    expect(d.inputs?.map((i) => i.lines)).toEqual([seed2.toString('utf8').split('\n').length + 1, 1]);
  });
});

describe('pattern safety', () => {
  it('no rule pattern is super-linear on 1 MB adversarial lines', async () => {
    const { ALL_RULES } = await import('./index.js');
    // The last two: the fuzz suite's shrunk input (bench/faults/fuzz.mjs, journals), a line repeating an exception
    // name; `RuntimeError: .*speculative.*` backtracked from each one (6 s on 300 KB, minutes on 1 MB).
    const lines = [
      'x'.repeat(1 << 20),
      'a '.repeat(1 << 19),
      `ValueError: ${'x'.repeat(1 << 20)}`,
      ' File "'.repeat(1 << 17),
      '['.repeat(1 << 20),
      'RuntimeError: CUDA out of memory '.repeat(30_000),
      'ValueError: '.repeat(80_000),
    ];
    for (const text of lines) {
      for (const rule of ALL_RULES) {
        for (const p of rule.patterns) {
          const t0 = performance.now();
          p.test(text);
          expect(performance.now() - t0, `${rule.id} ${p.source.slice(0, 50)}`).toBeLessThan(500);
        }
      }
    }
  });
});

describe('rules see the first 16 KiB of a message', () => {
  it('finds a cause at the start of a huge line and ignores one past the limit', async () => {
    const { MAX_MATCH_CHARS } = await import('./matcher.js');
    const cause = 'RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.';
    expect(findFatalLine(`${cause} ${'x'.repeat(1 << 20)}`, 'sglang')?.class).toBe('kv_cache_oom');
    expect(findFatalLine(`${'x'.repeat(MAX_MATCH_CHARS)} ${cause}`, 'sglang')).toBeNull();
  });
});

describe('several sources pushed interleaved', () => {
  it('gives the same result as pushing each source whole', () => {
    const a = Buffer.from(seed2);
    const b = readFileSync(join(FIX, 'vllm/nccl-watchdog-abort/journal.jsonl'));
    const whole = diagnoseLogs([
      { name: 'node1', content: a },
      { name: 'node2', content: b },
    ]);
    const d = createDiagnoser();
    const r = rng(11);
    d.push('node1', a.subarray(0, 10)); // sources are reported in order of first appearance
    let i = 10;
    let j = 0;
    while (i < a.length || j < b.length) {
      const n = 1 + Math.floor(r() * 300);
      if (r() < 0.5 && i < a.length) {
        d.push('node1', a.subarray(i, i + n));
        i += n;
      } else if (j < b.length) {
        d.push('node2', b.subarray(j, j + n));
        j += n;
      } else {
        d.push('node1', a.subarray(i, i + n));
        i += n;
      }
    }
    const mixed = d.finish();
    expect(mixed.verdict).toEqual(whole.verdict);
    expect(mixed.lifetimes).toEqual(whole.lifetimes);
    expect(mixed.inputs).toEqual(whole.inputs);
  });
});

describe('pathological lines (no rule, prefix or record pattern may backtrack without bound)', () => {
  // Each input repeats what one pattern scans with an open-ended class; a quadratic pattern takes hours on these.
  const LINES = [
    'a'.repeat(200_000),
    ' '.repeat(200_000),
    'a b'.repeat(60_000),
    `(${'a b=c '.repeat(30_000)}`,
    `what(): ${'ab '.repeat(60_000)}`,
    `GGML_ASSERT(${'x'.repeat(200_000)}`,
    `requires ${'a'.repeat(200_000)}`,
    `Cuda error ${'x'.repeat(200_000)}`,
    `AttributeError: '${'E'.repeat(200_000)}`,
    '[rank0]: '.repeat(20_000),
    `2026-01-01T00:00:00Z ${'a'.repeat(200_000)}`,
    'x  | '.repeat(40_000),
    `KeyError: '${'w.'.repeat(100_000)}`,
  ];
  it('diagnoses each, one per input and all in one, without hanging', () => {
    for (const line of LINES)
      expect(diagnoseLogs([{ name: 'x', content: `${line}\n` }]).verdict.class).toBeTypeOf('string');
    expect(diagnoseLogs([{ name: 'x', content: LINES.join('\n') }]).lifetimes.length).toBeGreaterThan(0);
  });
});
