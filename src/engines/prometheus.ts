// A minimal Prometheus text-format reader for the handful of engine metrics spectune normalises.

/** Samples of one metric family, keyed by the raw label text ("" when unlabelled). */
export type MetricSamples = Map<string, number>;

// Sample line: name{labels} value [timestamp]; comments and blank lines are skipped.
const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)/;

// Parse exposition text into metric name -> label text -> value.
export function parsePrometheusText(text: string): Map<string, MetricSamples> {
  const out = new Map<string, MetricSamples>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = SAMPLE_LINE.exec(line.trim());
    if (!m) continue;
    const value = Number(m[3]);
    if (Number.isNaN(value)) continue;
    const family = out.get(m[1]) ?? new Map<string, number>();
    family.set(m[2] ?? '', value);
    out.set(m[1], family);
  }
  return out;
}

// Sum a metric over all its label sets (e.g. over TP ranks or engines); null when absent.
export function sumMetric(metrics: Map<string, MetricSamples>, ...names: string[]): number | null {
  for (const name of names) {
    const family = metrics.get(name);
    if (family && family.size > 0) return [...family.values()].reduce((a, b) => a + b, 0);
  }
  return null;
}

// Average a gauge over its label sets (per-rank gauges such as token usage); null when absent.
export function meanMetric(metrics: Map<string, MetricSamples>, ...names: string[]): number | null {
  for (const name of names) {
    const family = metrics.get(name);
    if (family && family.size > 0) return [...family.values()].reduce((a, b) => a + b, 0) / family.size;
  }
  return null;
}
