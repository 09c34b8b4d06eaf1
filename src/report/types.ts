// What a report is built from (store data, already loaded) and what renderers draw (the model). Pure data.
import type { BenchRun } from '../bench/types.js';
import type { ActionRecord, EvidenceLine, Verdict } from '../diagnose/types.js';
import type { CapacityFacts, ParamValue } from '../engines/types.js';

/** One trial as loaded from the store, with its bench runs and verdicts. */
export interface ReportTrial {
  id: number;
  seq: number;
  params: Record<string, ParamValue>;
  purpose: string;
  reason: string;
  state: string;
  objective: number | null;
  constraintsOk: boolean | null;
  constraintNotes: string[];
  capacity: CapacityFacts | null;
  predictionWrong?: boolean | null;
  error: string | null;
  startedAt: string;
  finishedAt: string | null;
  runs: BenchRun[];
  verdicts: Verdict[];
}

/** Everything a report needs, as loaded by app/report.ts. */
export interface ReportInput {
  campaign: {
    id: number;
    name: string;
    status: string;
    engine: string;
    config: Record<string, unknown>;
    bestTrialId?: number | null;
    /** Sequence number of the best trial, when known. */
    bestSeq?: number | null;
    summary: string | null;
    /** The store's own "simulated campaign" flag, when the store carries one (see isSimulated). */
    simulated?: boolean;
    createdAt: string;
    finishedAt: string | null;
  };
  trials: ReportTrial[];
  actions: ActionRecord[];
  /** When the report was generated (ISO); passed in so rendering stays pure. */
  generatedAt: string;
}

/** One row of the trials table. */
export interface TrialRow {
  seq: number;
  config: string;
  purpose: string;
  reason: string;
  state: string;
  /** Aggregate output tok/s by concurrency level. */
  tokPerSec: Record<number, number | null>;
  objective: number | null;
  /** Objective relative to the baseline (+0.25 = 25% better in the goal's direction), or null. */
  vsBaseline: number | null;
  acceptLength: number | null;
  maxRunningRequests: number | null;
  /** Short verdict: "ok", "violates: ...", "kv_cache_oom", "predicted OOM", ... */
  verdict: string;
  isBest: boolean;
  isBaseline: boolean;
}

/** One point of a parameter chart. */
export interface ChartPoint {
  x: ParamValue;
  y: number | null;
  status: 'ok' | 'violates' | 'failed' | 'infeasible';
  seq: number;
}

/** The objective against one parameter. */
export interface ChartModel {
  key: string;
  yLabel: string;
  points: ChartPoint[];
  numeric: boolean;
}

/** One line of the campaign timeline. */
export interface TimelineEntry {
  ts: string;
  kind: 'campaign' | 'trial' | 'action' | 'failure';
  text: string;
}

/** A failed trial with its diagnosis. */
export interface FailureModel {
  seq: number;
  config: string;
  class: string;
  confidence: string;
  summary: string;
  evidence: EvidenceLine[];
  remediation: string[];
}

/** Everything renderers draw. */
export interface ReportModel {
  title: string;
  generatedAt: string;
  campaign: ReportInput['campaign'];
  objective: { metric: string; concurrency: number; goal: 'maximize' | 'minimize' };
  keys: string[];
  concurrencies: number[];
  rows: TrialRow[];
  best: TrialRow | null;
  baseline: TrialRow | null;
  charts: ChartModel[];
  timeline: TimelineEntry[];
  failures: FailureModel[];
  counts: { trials: number; measured: number; failed: number; infeasible: number; restarts: number };
}
