// Objective and constraints, evaluated from the BenchRuns of a trial (and the baseline's, for relative bounds).
import type { BenchRun, Summary } from '../bench/types.js';
import type { BenchMetric, ConstraintSpec, ObjectiveSpec } from './types.js';

// Read one metric ("outputTokensPerSec", "ttftMs.p99", ...) out of the run at a concurrency; null when not measured.
export function readMetric(runs: BenchRun[], metric: BenchMetric, concurrency: number): number | null {
  const r =
    runs.find((x) => x.concurrency === concurrency && x.rate === null) ??
    runs.find((x) => x.concurrency === concurrency);
  if (!r || r.requests.ok === 0) return null;
  const [field, stat] = metric.split('.') as [keyof BenchRun, keyof Summary | undefined];
  const value = r[field];
  if (stat === undefined) return typeof value === 'number' ? value : null;
  return value && typeof value === 'object' && stat in value ? (value as unknown as Summary)[stat] : null;
}

// The objective value of a trial (null when its level did not produce it).
export function evaluateObjective(runs: BenchRun[], spec: ObjectiveSpec): number | null {
  return readMetric(runs, spec.metric, spec.concurrency);
}

// Check every constraint; a relative bound without a baseline figure is reported, not silently passed.
export function checkConstraints(runs: BenchRun[], specs: ConstraintSpec[], baseline: BenchRun[] | null): string[] {
  const violations: string[] = [];
  for (const c of specs) {
    const v = readMetric(runs, c.metric, c.concurrency);
    const base = c.relative ? (baseline ? readMetric(baseline, c.metric, c.concurrency) : null) : 1;
    const label = `${c.metric}@c${c.concurrency}`;
    if (v === null) {
      violations.push(`${label}: not measured`);
      continue;
    }
    if (base === null) {
      violations.push(`${label}: no baseline figure for a relative bound`);
      continue;
    }
    const bound = c.relative ? c.value * base : c.value;
    const ok = c.op === '>=' ? v >= bound : v <= bound;
    if (!ok)
      violations.push(
        `${label} = ${v.toFixed(1)}, expected ${c.op} ${bound.toFixed(1)}${c.relative ? ` (${c.value * 100}% of baseline)` : ''}`,
      );
  }
  return violations;
}

// Whether a is better than b under the objective's goal.
export function isBetter(a: number, b: number, goal: ObjectiveSpec['goal']): boolean {
  return goal === 'maximize' ? a > b : a < b;
}

// The unit a metric is read in, shown next to every objective figure: "tok/s", "tok/s per request", "ms", "req/s".
export function metricUnit(metric: string): string {
  if (metric.startsWith('decodeTokensPerSec')) return 'tok/s per request';
  if (metric === 'outputTokensPerSec') return 'tok/s';
  if (metric === 'requestsPerSec') return 'req/s';
  if (metric === 'acceptLength') return 'tokens/step';
  return /Ms(\.|$)/.test(metric) ? 'ms' : '';
}
