// Table-driven: every fixture folder under test/fixtures/journal, in every form it ships, must give its expected verdict.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ALL_RULES, diagnoseLogs, parseActionLog } from './index.js';
import type { Diagnosis } from './types.js';

const ROOT = join(import.meta.dirname, '../../test/fixtures/journal');
const FORMS = ['journal.txt', 'journal.jsonl', 'engine.log'];
const CORPUS = join(import.meta.dirname, '../../test/corpus/real');
/** Slurm job records (job output and slurmd lines), the evidence the slurm.* rules read. */
const SLURM = join(import.meta.dirname, '../../test/fixtures/slurm');

interface Expected {
  unit?: string;
  class: string;
  cause?: string | null;
  confidence?: string;
  crashed?: boolean;
  facts?: Record<string, string | number>;
  evidence?: string[];
  ruledOut?: string[];
  rootException?: null | { type: string; message?: string; frames?: string[] };
  remediation?: string[];
  forms?: Record<string, Partial<Expected>>;
}

// Every fixture folder: <engine>/<case>.
function fixtureDirs(): string[] {
  return readdirSync(ROOT, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((e) =>
      readdirSync(join(ROOT, e.name), { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((c) => join(ROOT, e.name, c.name)),
    );
}

// Run diagnose on one form of a fixture folder.
function runFixture(dir: string, form: string): Diagnosis {
  const read = (f: string) => (existsSync(join(dir, f)) ? readFileSync(join(dir, f), 'utf8') : undefined);
  const exp = JSON.parse(read('expected.json')!) as Expected;
  const actions = read('actions.jsonl');
  const kernel = read('kernel.txt');
  return diagnoseLogs([{ name: form, content: readFileSync(join(dir, form)) }], {
    state: form === 'engine.log' ? undefined : read('state.txt'),
    actions: actions ? parseActionLog(actions).actions : undefined,
    unit: exp.unit,
    kernelLines: kernel,
  });
}

// "func@file:line" frame matchers.
function frameMatches(d: Diagnosis, spec: string): boolean {
  const [func, where] = spec.split('@');
  return (d.rootException?.frames ?? []).some(
    (f) => f.func === func && (!where || `${f.file}:${f.line}`.endsWith(where)),
  );
}

const cases = fixtureDirs().flatMap((dir) =>
  FORMS.filter((f) => existsSync(join(dir, f))).map((form) => ({
    dir,
    form,
    name: `${dir.slice(ROOT.length + 1)} [${form}]`,
  })),
);

describe('fixture folders', () => {
  it('exist for both seeds', () => {
    expect(cases.map((c) => c.name)).toEqual(
      expect.arrayContaining([
        expect.stringContaining('seed1-stop-timeout'),
        expect.stringContaining('seed2-crash-loop-kv-oom'),
      ]),
    );
  });

  it.each(cases)('$name', ({ dir, form }) => {
    const base = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')) as Expected;
    const exp = { ...base, ...(base.forms?.[form] ?? {}) };
    const d = runFixture(dir, form);
    const v = d.verdict;
    expect(v.class, v.summary).toBe(exp.class);
    if (exp.cause !== undefined) expect(v.cause).toBe(exp.cause);
    if (exp.confidence) expect(v.confidence).toBe(exp.confidence);
    if (exp.crashed !== undefined) expect(v.crashed).toBe(exp.crashed);
    for (const [k, val] of Object.entries(exp.facts ?? {})) expect(v.facts?.[k], k).toEqual(val);
    for (const s of exp.evidence ?? []) expect(v.evidence.map((e) => e.text).join('\n')).toContain(s);
    for (const c of exp.ruledOut ?? []) expect(v.ruledOut.map((r) => r.class)).toContain(c);
    for (const s of exp.remediation ?? [])
      expect(v.remediation.map((r) => r.setting ?? r.unitDirective ?? r.text)).toContain(s);
    if (exp.rootException === null) expect(d.rootException).toBeNull();
    if (exp.rootException) {
      expect(d.rootException?.type).toBe(exp.rootException.type);
      if (exp.rootException.message) expect(d.rootException?.message).toContain(exp.rootException.message);
      for (const f of exp.rootException.frames ?? []) expect(frameMatches(d, f), f).toBe(true);
    }
    for (const e of v.evidence) expect(e.line).toBeGreaterThanOrEqual(0);
  });
});

describe('rules meta-test', () => {
  it('every rule id matches at least one line of a positive fixture or of a real corpus case', () => {
    const hit = new Set<string>();
    const corpus = readdirSync(CORPUS).flatMap((e) => readdirSync(join(CORPUS, e)).map((c) => join(CORPUS, e, c)));
    const slurm = readdirSync(SLURM)
      .map((c) => join(SLURM, c))
      .filter((d) => existsSync(join(d, 'job.out')));
    for (const dir of [...fixtureDirs(), ...corpus, ...slurm]) {
      const text =
        [...FORMS, 'log.txt', 'job.out', 'slurmd.log']
          .filter((f) => existsSync(join(dir, f)))
          .map((f) => readFileSync(join(dir, f), 'utf8'))
          .join('\n') + (existsSync(join(dir, 'kernel.txt')) ? readFileSync(join(dir, 'kernel.txt'), 'utf8') : '');
      for (const r of ALL_RULES) if (r.patterns.some((p) => text.split('\n').some((l) => p.test(l)))) hit.add(r.id);
    }
    expect(ALL_RULES.map((r) => r.id).filter((id) => !hit.has(id))).toEqual([]);
  });
});
