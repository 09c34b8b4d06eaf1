// The real-log corpus (test/corpus/real/<engine>/<case>/{log.txt,case.json}) and its scoring, shared by
// bench/diagnose-accuracy.mjs (figures) and the CI floor test (test/unit/diagnose-corpus.test.ts).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Engines of the corpus, in table order. */
export const ENGINES = ['sglang', 'vllm', 'llamacpp'];

// Every case of the corpus under root, sorted by engine then slug; throws on a malformed case (a corpus defect).
export function loadCorpus(root) {
  const cases = [];
  for (const engine of ENGINES) {
    const dir = join(root, engine);
    if (!existsSync(dir)) continue;
    for (const slug of readdirSync(dir).sort()) {
      const caseDir = join(dir, slug);
      const meta = JSON.parse(readFileSync(join(caseDir, 'case.json'), 'utf8'));
      const log = readFileSync(join(caseDir, 'log.txt'));
      for (const k of ['url', 'engine', 'class', 'established'])
        if (!meta[k]) throw new Error(`${engine}/${slug}: case.json lacks "${k}"`);
      if (meta.engine !== engine) throw new Error(`${engine}/${slug}: engine "${meta.engine}" filed under ${engine}`);
      cases.push({ id: `${engine}/${slug}`, engine, meta, log });
    }
  }
  return cases;
}

// Is a verdict right for a case: the same class, or a crash loop whose every start dies of the case's class.
export function isRight(verdict, meta) {
  return verdict.class === meta.class || (verdict.class === 'crash_loop' && verdict.cause === meta.class);
}

// Diagnose every case with `diagnoseLogs` (the library's own) and collect one row per case.
export function runCorpus(cases, diagnoseLogs) {
  return cases.map((c) => {
    let verdict;
    try {
      verdict = diagnoseLogs([{ name: 'log.txt', content: c.log }], {}).verdict;
    } catch (e) {
      verdict = { class: 'refused', cause: null, confidence: 'none', evidence: [], summary: String(e?.message ?? e) };
    }
    const right = isRight(verdict, c.meta);
    const quoted = c.meta.decisive
      ? verdict.evidence.some((e) => e.text.includes(c.meta.decisive) || c.meta.decisive.includes(e.text))
      : null;
    return {
      id: c.id,
      engine: c.engine,
      truth: c.meta.class,
      got: verdict.class,
      cause: verdict.cause,
      confidence: verdict.confidence,
      right,
      quoted,
      hard: c.meta.hard ?? [],
      summary: verdict.summary,
    };
  });
}

// Share right of a list of rows (NaN when empty).
function share(rows) {
  return rows.length ? rows.filter((r) => r.right).length / rows.length : NaN;
}

// Aggregate figures: overall, per engine, per class, hard cases, confident-wrong, calibration.
export function scoreRows(rows) {
  const by = (key) =>
    Object.fromEntries([...new Set(rows.map((r) => r[key]))].sort().map((k) => [k, rows.filter((r) => r[key] === k)]));
  const perEngine = Object.fromEntries(ENGINES.map((e) => [e, rows.filter((r) => r.engine === e)]));
  const high = rows.filter((r) => r.confidence === 'high');
  return {
    cases: rows.length,
    accuracy: share(rows),
    perEngine: Object.fromEntries(
      Object.entries(perEngine).map(([k, v]) => [k, { cases: v.length, accuracy: share(v) }]),
    ),
    perClass: Object.fromEntries(
      Object.entries(by('truth')).map(([k, v]) => [k, { cases: v.length, accuracy: share(v) }]),
    ),
    hard: { cases: rows.filter((r) => r.hard.length).length, accuracy: share(rows.filter((r) => r.hard.length)) },
    confidentWrong: high.filter((r) => !r.right).map((r) => r.id),
    calibration: Object.fromEntries(
      ['high', 'medium', 'low'].map((c) => {
        const v = rows.filter((r) => r.confidence === c);
        return [c, { verdicts: v.length, right: share(v) }];
      }),
    ),
    refused: rows.filter((r) => r.got === 'refused').map((r) => r.id),
    decisiveQuoted: (() => {
      const v = rows.filter((r) => r.quoted !== null && r.right);
      return v.length ? v.filter((r) => r.quoted).length / v.length : NaN;
    })(),
    highShareRight: high.length ? high.filter((r) => r.right).length / high.length : NaN,
  };
}

// Confusion matrix: truth class -> predicted class -> count.
export function confusion(rows) {
  const m = {};
  for (const r of rows) {
    m[r.truth] ??= {};
    m[r.truth][r.got] = (m[r.truth][r.got] ?? 0) + 1;
  }
  return m;
}
