// The one Prometheus text-format reader: the engine adapters (parseMetrics) and the bench's engine view use it.

/** One Prometheus sample line. */
export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE_LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

// Parse Prometheus exposition text into samples (comments and malformed lines are skipped).
export function parsePrometheus(text: string): PromSample[] {
  const out: PromSample[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const m = SAMPLE_LINE.exec(line);
    if (!m) continue;
    const value = parsePromNumber(m[4]);
    if (value === null) continue;
    const labels: Record<string, string> = {};
    if (m[3])
      for (const l of m[3].matchAll(LABEL))
        labels[l[1]] = l[2].replace(/\\(.)/g, (_s, c: string) => (c === 'n' ? '\n' : c));
    out.push({ name: m[1], labels, value });
  }
  return out;
}

function parsePromNumber(s: string): number | null {
  if (s === '+Inf') return Infinity;
  if (s === '-Inf') return -Infinity;
  if (s === 'NaN') return NaN;
  const n = Number(s);
  return Number.isNaN(n) ? null : n;
}

// The finite values of the first of `names` that has any (a metric exported under several names across versions).
function valuesOf(samples: readonly PromSample[], names: readonly string[]): number[] | null {
  for (const name of names) {
    const vs = samples.filter((s) => s.name === name && Number.isFinite(s.value)).map((s) => s.value);
    if (vs.length > 0) return vs;
  }
  return null;
}

// Sum a metric over all its series (TP/DP ranks, engines); null when absent.
export function sumMetric(samples: readonly PromSample[], ...names: string[]): number | null {
  const vs = valuesOf(samples, names);
  return vs ? vs.reduce((a, b) => a + b, 0) : null;
}

// Average a gauge over its series (per-rank ratios such as KV usage and acceptance); null when absent.
export function meanMetric(samples: readonly PromSample[], ...names: string[]): number | null {
  const vs = valuesOf(samples, names);
  return vs ? vs.reduce((a, b) => a + b, 0) / vs.length : null;
}
