// The floor under diagnose on real crash logs (test/corpus/real: excerpts exactly as published in public issue
// threads, each with the cause the thread established). bench/diagnose-accuracy.mjs prints the full tables.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM shared with the benchmark script (no type declarations)
import { ENGINES, loadCorpus, runCorpus, scoreRows } from '../../bench/lib/diagnose-corpus.mjs';
import { diagnoseLogs } from '../../src/diagnose/index.js';

const ROOT = join(import.meta.dirname, '../../test/corpus/real');
/** The floors of the issue: 90% overall, 85% per engine, no confident-wrong verdict, 95% of `high` right. */
const FLOOR = { overall: 0.9, perEngine: 0.85, highRight: 0.95, cases: 150, perEngineCases: 30, hard: 40 };
const CRASH_CLASSES = [
  'kv_cache_oom',
  'cuda_oom',
  'cuda_graph_capture_failure',
  'host_oom_kill',
  'stop_timeout',
  'crash_loop',
  'distributed_error',
  'port_in_use',
  'bad_config',
  'model_load_error',
  'speculative_error',
  'cuda_error',
  'external_kill',
  'clean_stop',
  'disk_full',
  'tokenizer_error',
  'dependency_error',
];

interface Case {
  id: string;
  engine: string;
  meta: { url: string; class: string; decisive?: string; hard?: string[]; established: string };
  log: Buffer;
}
const cases = loadCorpus(ROOT) as Case[];

describe('real-log corpus: data', () => {
  it('holds 150+ cases, 30+ per engine, 40+ hard ones, every crash class', () => {
    expect(cases.length).toBeGreaterThanOrEqual(FLOOR.cases);
    for (const e of ENGINES)
      expect(cases.filter((c) => c.engine === e).length, e).toBeGreaterThanOrEqual(FLOOR.perEngineCases);
    expect(cases.filter((c) => (c.meta.hard ?? []).length).length).toBeGreaterThanOrEqual(FLOOR.hard);
    const classes = new Set(cases.map((c) => c.meta.class));
    expect(CRASH_CLASSES.filter((k) => !classes.has(k))).toEqual([]);
  });
  it('every case names its thread, the established cause, and a decisive line that is in its excerpt', () => {
    for (const c of cases) {
      expect(c.meta.url, c.id).toMatch(/^https:\/\/github\.com\/[\w.-]+\/[\w.-]+\/(?:issues|pull|discussions)\/\d+/);
      expect(c.meta.established.length, c.id).toBeGreaterThan(10);
      expect(CRASH_CLASSES, c.id).toContain(c.meta.class);
      if (c.meta.decisive) expect(readFileSync(join(ROOT, c.id, 'log.txt'), 'utf8'), c.id).toContain(c.meta.decisive);
    }
  });
});

describe('real-log corpus: diagnose holds the floor', () => {
  const rows = runCorpus(cases, diagnoseLogs);
  const s = scoreRows(rows);
  it('refuses no input', () => expect(s.refused).toEqual([]));
  it(`is right on at least ${FLOOR.overall * 100}% overall and ${FLOOR.perEngine * 100}% per engine`, () => {
    expect(s.accuracy).toBeGreaterThanOrEqual(FLOOR.overall);
    for (const e of ENGINES) expect(s.perEngine[e].accuracy, e).toBeGreaterThanOrEqual(FLOOR.perEngine);
  });
  it('gives no confident-wrong verdict, and 95%+ of high verdicts are right', () => {
    expect(s.confidentWrong).toEqual([]);
    expect(s.highShareRight).toBeGreaterThanOrEqual(FLOOR.highRight);
  });
  it('quotes the decisive line in the evidence of most right verdicts', () => {
    expect(s.decisiveQuoted).toBeGreaterThanOrEqual(0.85);
  });
});
