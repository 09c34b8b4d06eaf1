// Per-trial figures for the charts and the latency table: the objective of each trial, and the objective metric,
// TTFT and ITL against concurrency. Pure.
import type { BenchRun, Summary } from '../bench/types.js';
import { formatConfig } from './format.js';
import type { BarChartModel, LatencyRow, LineChartModel, ReportModel, ReportTrial, Series, TrialRow } from './types.js';

/** The latency charts: which summary of which field, and how the axis is labelled. */
const LATENCY_CHARTS = [
  { id: 'ttft-mean', field: 'ttftMs', stat: 'mean', title: 'Time to first token, mean', yLabel: 'TTFT mean (ms)' },
  { id: 'ttft-p99', field: 'ttftMs', stat: 'p99', title: 'Time to first token, p99', yLabel: 'TTFT p99 (ms)' },
  { id: 'itl-mean', field: 'itlMs', stat: 'mean', title: 'Inter-token latency, mean', yLabel: 'ITL mean (ms)' },
  { id: 'itl-p99', field: 'itlMs', stat: 'p99', title: 'Inter-token latency, p99', yLabel: 'ITL p99 (ms)' },
] as const;

/** Short axis names (with units) of the metrics an objective can name. */
const METRIC_NAMES: Record<string, string> = {
  outputTokensPerSec: 'output tok/s',
  requestsPerSec: 'requests/s',
  ttftMs: 'TTFT (ms)',
  itlMs: 'ITL (ms)',
  e2eMs: 'E2E latency (ms)',
  decodeTokensPerSec: 'tok/s per request',
};
/** A verdict summary on a chart note is cut here (the whole one is in the diagnoses section). */
const NOTE_CHARS = 160;

// An axis title for a metric: "decodeTokensPerSec.mean" → "tok/s per request, mean".
export function labelMetric(metric: string): string {
  const [field, stat] = metric.split('.');
  const name = METRIC_NAMES[field] ?? field;
  return stat ? `${name}, ${stat}` : name;
}

// A long summary cut to one short line.
function clip(text: string): string {
  return text.length > NOTE_CHARS ? `${text.slice(0, NOTE_CHARS - 1).trimEnd()}…` : text;
}

// One value of a bench run: a plain number field, or one statistic of a summary field.
function readRun(r: BenchRun, metric: string): number | null {
  if (r.requests.ok === 0) return null;
  const [field, stat] = metric.split('.');
  const v = (r as unknown as Record<string, unknown>)[field];
  if (stat === undefined) return typeof v === 'number' && Number.isFinite(v) ? v : null;
  const s = v && typeof v === 'object' ? (v as Summary)[stat as keyof Summary] : null;
  return typeof s === 'number' && Number.isFinite(s) ? s : null;
}

// The closed-loop run of a trial at one level.
function runAt(t: ReportTrial, c: number): BenchRun | undefined {
  return t.runs.find((r) => r.concurrency === c && r.rate === null) ?? t.runs.find((r) => r.concurrency === c);
}

// Why a trial has no line ("trial 6 failed: crash_loop (kv_cache_oom), high confidence — summary").
function whyNotPlotted(t: ReportTrial, row: TrialRow): string {
  const v = t.verdicts[0];
  if (v) return `trial ${t.seq} ${t.state}: ${row.verdict}, ${v.confidence} confidence — ${clip(v.summary)}`;
  return `trial ${t.seq} ${t.state}: ${row.verdict}`;
}

// One line chart of `metric` against concurrency, a line per measured trial.
function lineChart(
  id: string,
  title: string,
  yLabel: string,
  metric: string,
  trials: ReportTrial[],
  rows: TrialRow[],
  xs: number[],
): LineChartModel {
  const series: Series[] = [];
  const notPlotted: string[] = [];
  trials.forEach((t, i) => {
    const row = rows[i];
    const points = xs.flatMap((x) => {
      const r = runAt(t, x);
      const y = r ? readRun(r, metric) : null;
      return y === null ? [] : [{ x, y }];
    });
    if (!points.length) {
      if (t.state === 'failed' || t.state === 'infeasible') notPlotted.push(whyNotPlotted(t, row));
      return;
    }
    const role = row.isBest ? 'best' : row.isBaseline ? 'baseline' : 'other';
    const label = `trial ${t.seq}${row.isBest ? ' ★ winner' : row.isBaseline ? ' (baseline)' : ''}`;
    series.push({ seq: t.seq, label, role, violates: t.constraintsOk === false, points });
  });
  return { id, title, yLabel, xs, series, notPlotted };
}

// The objective metric, then TTFT and ITL (mean, p99), against concurrency.
export function buildLevelCharts(
  trials: ReportTrial[],
  rows: TrialRow[],
  xs: number[],
  objective: ReportModel['objective'],
): LineChartModel[] {
  const first = lineChart(
    'objective',
    `Objective metric by concurrency (the objective is read at c=${objective.concurrency})`,
    labelMetric(objective.metric),
    objective.metric,
    trials,
    rows,
    xs,
  );
  return [
    first,
    ...LATENCY_CHARTS.map((c) => lineChart(c.id, c.title, c.yLabel, `${c.field}.${c.stat}`, trials, rows, xs)),
  ];
}

// The objective of every trial that got as far as a verdict, in campaign order.
export function buildTrialChart(
  trials: ReportTrial[],
  rows: TrialRow[],
  objective: ReportModel['objective'],
): BarChartModel {
  const bars = trials
    .map((t, i) => ({ t, row: rows[i] }))
    .filter(({ t }) => ['measured', 'failed', 'infeasible'].includes(t.state))
    .map(({ t, row }) => ({
      seq: t.seq,
      y: t.state === 'measured' ? t.objective : null,
      status:
        t.state === 'failed'
          ? ('failed' as const)
          : t.state === 'infeasible'
            ? ('infeasible' as const)
            : t.constraintsOk === false
              ? ('violates' as const)
              : ('ok' as const),
      isBest: row.isBest,
      isBaseline: row.isBaseline,
      verdict: t.state === 'failed' || t.state === 'infeasible' ? row.verdict : null,
    }));
  return {
    title: `Objective by trial (${objective.goal} ${objective.metric} at c=${objective.concurrency})`,
    yLabel: labelMetric(objective.metric),
    bars,
  };
}

// Latency figures of every measured trial at every level.
export function buildLatency(trials: ReportTrial[], rows: TrialRow[], keys: string[]): LatencyRow[] {
  return trials.flatMap((t, i) =>
    [...t.runs]
      .sort((a, b) => a.concurrency - b.concurrency)
      .map((r) => ({
        seq: t.seq,
        config: formatConfig(t.params, keys),
        concurrency: r.concurrency,
        isBest: rows[i].isBest,
        tokPerSec: readRun(r, 'outputTokensPerSec'),
        ttftP50: readRun(r, 'ttftMs.p50'),
        ttftP99: readRun(r, 'ttftMs.p99'),
        itlP50: readRun(r, 'itlMs.p50'),
        itlP99: readRun(r, 'itlMs.p99'),
        e2eP50: readRun(r, 'e2eMs.p50'),
        e2eP99: readRun(r, 'e2eMs.p99'),
      })),
  );
}
