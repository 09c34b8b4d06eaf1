// Measurements attached to trials: bench runs, raw per-request samples, engine metrics and verdicts.
import type { BenchRun, RequestSample } from '../bench/types.js';
import type { Verdict } from '../diagnose/index.js';
import type { Db } from './db.js';
import { fromJson, isoNow, toJson, toText } from './json.js';

// Store one BenchRun per concurrency level.
export function insertBenchRuns(db: Db, trialId: number, runs: BenchRun[]): void {
  const st = db.prepare('INSERT INTO bench_runs (trial_id, concurrency, run_json) VALUES (?, ?, ?)');
  for (const r of runs) st.run(trialId, r.concurrency, toJson(r));
}

// Store raw per-request samples so reports can be recomputed.
export function insertSamples(db: Db, trialId: number, samples: RequestSample[]): void {
  const st = db.prepare(
    `INSERT INTO samples (trial_id, request_id, concurrency, ok, error_phase, error, start_ms, ttft_ms, e2e_ms, output_tokens, input_tokens, decode_tokens_per_sec)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  for (const s of samples) {
    st.run(
      trialId,
      toText(s.id),
      s.concurrency,
      Number(s.ok),
      s.errorPhase,
      toText(s.error),
      s.startMs,
      s.ttftMs,
      s.e2eMs,
      s.outputTokens,
      s.inputTokens,
      s.decodeTokensPerSec,
    );
  }
}

// Store a verdict with its evidence lines.
export function insertVerdict(db: Db, trialId: number, v: Verdict, ts?: string): void {
  db.prepare(
    'INSERT INTO verdicts (trial_id, class, cause, confidence, summary, evidence_json, verdict_json, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  ).run(trialId, v.class, v.cause, v.confidence, toText(v.summary), toJson(v.evidence), toJson(v), isoNow(ts));
}

// Bench runs of a trial, by concurrency.
export function listBenchRuns(db: Db, trialId: number): BenchRun[] {
  const rows = db
    .prepare('SELECT run_json FROM bench_runs WHERE trial_id = ? ORDER BY concurrency, id')
    .all(trialId) as { run_json: string }[];
  return rows.map((r) => fromJson<BenchRun>(r.run_json)!);
}

// Raw samples of a trial, in insertion order.
export function listSamples(db: Db, trialId: number): RequestSample[] {
  const rows = db.prepare('SELECT * FROM samples WHERE trial_id = ? ORDER BY id').all(trialId) as Record<
    string,
    unknown
  >[];
  return rows.map((r) => ({
    id: r.request_id as string,
    concurrency: r.concurrency as number,
    ok: r.ok === 1,
    errorPhase: r.error_phase as RequestSample['errorPhase'],
    error: r.error as string | null,
    startMs: r.start_ms as number,
    ttftMs: r.ttft_ms as number | null,
    e2eMs: r.e2e_ms as number | null,
    outputTokens: r.output_tokens as number,
    inputTokens: r.input_tokens as number | null,
    decodeTokensPerSec: r.decode_tokens_per_sec as number | null,
  }));
}

// The verdicts of a trial (usually one), newest last.
export function listVerdicts(db: Db, trialId: number): Verdict[] {
  const rows = db.prepare('SELECT verdict_json FROM verdicts WHERE trial_id = ? ORDER BY id').all(trialId) as {
    verdict_json: string;
  }[];
  return rows.map((r) => fromJson<Verdict>(r.verdict_json)!);
}

/** One scrape of the engine's metrics during a trial. */
export interface EngineMetricsRecord {
  ts: string;
  phase: string;
  metrics: Record<string, unknown>;
}

// Store one scrape of engine metrics (e.g. before/after a bench level).
export function recordEngineMetrics(db: Db, trialId: number, m: { phase: string; metrics: object; ts?: string }): void {
  db.prepare('INSERT INTO engine_metrics (trial_id, ts, phase, metrics_json) VALUES (?, ?, ?, ?)').run(
    trialId,
    isoNow(m.ts),
    m.phase,
    toJson(m.metrics),
  );
}

// Engine metric scrapes of a trial.
export function listEngineMetrics(db: Db, trialId: number): EngineMetricsRecord[] {
  const rows = db
    .prepare('SELECT ts, phase, metrics_json FROM engine_metrics WHERE trial_id = ? ORDER BY id')
    .all(trialId) as { ts: string; phase: string; metrics_json: string }[];
  return rows.map((r) => ({ ts: r.ts, phase: r.phase, metrics: fromJson(r.metrics_json) ?? {} }));
}
