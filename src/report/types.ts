// What a report is built from (store data, already loaded) and what renderers draw (the model). Pure data.
import type { BenchRun } from '../bench/types.js';
import type { ActionRecord, EvidenceLine, Verdict } from '../diagnose/index.js';
import type { CapacityFacts, ParamValue } from '../engines/types.js';
import type { CampaignEndState } from '../store/campaigns.js';

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
    /** What the service ran when the campaign ended (null: not recorded). */
    endState?: CampaignEndState | null;
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
  /** The winner's trial number (its point is marked), or null. */
  bestSeq: number | null;
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

/** One trial's line on a per-concurrency chart. */
export interface Series {
  seq: number;
  /** "trial 3", "trial 3 ★ winner", "trial 1 (baseline)". */
  label: string;
  role: 'best' | 'baseline' | 'other';
  /** The trial violated a constraint (drawn dotted). */
  violates: boolean;
  points: { x: number; y: number }[];
}

/** A metric against the concurrency level, one line per measured trial. */
export interface LineChartModel {
  id: string;
  title: string;
  yLabel: string;
  /** Concurrency levels, in order (drawn evenly spaced). */
  xs: number[];
  series: Series[];
  /** Trials with nothing to draw, with why (failed with its verdict, refused as infeasible). */
  notPlotted: string[];
}

/** One bar of the objective-by-trial chart. */
export interface TrialBar {
  seq: number;
  y: number | null;
  status: ChartPoint['status'];
  isBest: boolean;
  isBaseline: boolean;
  /** Short verdict for a failed or refused trial ("crash_loop (kv_cache_oom)"), else null. */
  verdict: string | null;
}

/** The objective of every trial in campaign order. */
export interface BarChartModel {
  title: string;
  yLabel: string;
  bars: TrialBar[];
}

/** Latency and throughput of one trial at one concurrency level. */
export interface LatencyRow {
  seq: number;
  config: string;
  concurrency: number;
  isBest: boolean;
  tokPerSec: number | null;
  ttftP50: number | null;
  ttftP99: number | null;
  itlP50: number | null;
  itlP99: number | null;
  e2eP50: number | null;
  e2eP99: number | null;
}

/** One unit as the campaign left it. */
export interface RunningUnit {
  host: string;
  unit: string;
  execStart: string | null;
  dropInPath: string;
  dropIn: string | null;
}

/** "What is running now": the config on the unit(s) when the campaign ended. */
export interface RunningModel {
  ts: string;
  config: string;
  healthy: boolean;
  /** Whether that is the winner's config. */
  isWinner: boolean;
  units: RunningUnit[];
}

/** The lines to put into one unit to keep the winner. */
export interface KeepUnit {
  host: string;
  unit: string;
  /** The operator's own ExecStart with the winner's flags patched in (the engine adapter's patch). */
  execStart: string;
  /** A drop-in that carries it: path and text. */
  dropInPath: string;
  dropIn: string;
  warnings: string[];
}

/** "The exact flags to keep": the winner's flags, and the ExecStart line per unit when the store has the unit. */
export interface KeepModel {
  config: string;
  /** Engine flags as the engine spells them, with the value before the campaign when known. */
  flags: { key: string; flag: string; value: string; from: string | null }[];
  /** Empty when the store has no copy of the unit (then `note` says so). */
  units: KeepUnit[];
  note: string | null;
}

/** The best measured config at one concurrency level (the "Best config per concurrency" section). */
export interface LevelBest {
  concurrency: number;
  config: string;
  outputTokensPerSec: number;
  baseline: number | null;
  vsBaseline: number | null;
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
  /** The objective of every trial (winner marked, failures with their verdicts). */
  trialChart: BarChartModel;
  /** The objective metric, TTFT and ITL (mean, p99) against concurrency, one line per trial. */
  levelCharts: LineChartModel[];
  latency: LatencyRow[];
  /** The best config at each concurrency level, ranked as the campaign summary ranks them. */
  levelBests: LevelBest[];
  /** SIMULATED campaign: every page says so. */
  simulated: boolean;
  /** Every rank the campaign tuned (host and unit), rank0 first. */
  targets: TargetModel[];
  running: RunningModel | null;
  keep: KeepModel | null;
  timeline: TimelineEntry[];
  failures: FailureModel[];
  counts: { trials: number; measured: number; failed: number; infeasible: number; restarts: number };
}

/** One rank of the tuned target. */
export interface TargetModel {
  rank: number;
  host: string;
  unit: string;
}
