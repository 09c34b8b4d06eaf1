// Log-bucketed histogram (HDR-style): fixed memory whatever the sample count, percentiles within 0.1% relative error.

// Bucket i covers [MIN * G^i, MIN * G^(i+1)); reporting the geometric middle keeps the error under (G-1)/2 = 0.1%,
// well inside the 1% the benchmark promises at concurrency 1 (17k buckets, 138 KB per histogram).
const GROWTH = 1.002;
const LOG_GROWTH = Math.log(GROWTH);
const MID = Math.sqrt(GROWTH);
// Smallest value told apart from zero: 1 ns when recording milliseconds; tinier values count as "at most MIN".
const MIN_VALUE = 1e-6;
// Largest value with its own bucket: 1e9 (11.6 days in ms, or 1e9 tok/s); larger values land in the last bucket.
const MAX_VALUE = 1e9;
const BUCKETS = Math.ceil(Math.log(MAX_VALUE / MIN_VALUE) / LOG_GROWTH) + 1;

/** Percentile summary of a histogram; null fields when it is empty. */
export interface HistogramSummary {
  count: number;
  mean: number | null;
  min: number | null;
  max: number | null;
  p50: number | null;
  p90: number | null;
  p99: number | null;
}

/** Fixed-size histogram of non-negative values: exact count, sum, min and max; percentiles to within 0.1%. */
export class LogHistogram {
  private readonly counts = new Float64Array(BUCKETS);
  private zeros = 0;
  count = 0;
  sum = 0;
  min = Infinity;
  max = -Infinity;

  // Add one value (negative and non-finite values are ignored: they are measurement bugs, not samples).
  record(v: number): void {
    if (!(v >= 0) || v === Infinity) return;
    this.count++;
    this.sum += v;
    if (v < this.min) this.min = v;
    if (v > this.max) this.max = v;
    if (v < MIN_VALUE) {
      this.zeros++;
      return;
    }
    const i = Math.floor(Math.log(v / MIN_VALUE) / LOG_GROWTH);
    this.counts[i < BUCKETS ? i : BUCKETS - 1]++;
  }

  // Add a batch of values (one request's inter-token gaps) in one call.
  recordAll(values: Float64Array, n: number): void {
    for (let i = 0; i < n; i++) this.record(values[i]);
  }

  // Merge another histogram into this one.
  merge(other: LogHistogram): void {
    for (let i = 0; i < BUCKETS; i++) this.counts[i] += other.counts[i];
    this.zeros += other.zeros;
    this.count += other.count;
    this.sum += other.sum;
    if (other.min < this.min) this.min = other.min;
    if (other.max > this.max) this.max = other.max;
  }

  // Value at quantile q (0..1), nearest-rank, clamped to the exact min and max.
  quantile(q: number): number | null {
    if (this.count === 0) return null;
    const rank = Math.max(1, Math.ceil(q * this.count));
    if (rank >= this.count) return this.max;
    let seen = this.zeros;
    if (seen >= rank) return this.min;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.counts[i];
      if (seen >= rank) return clamp(MIN_VALUE * GROWTH ** i * MID, this.min, this.max);
    }
    return this.max;
  }

  // Mean and the percentiles the reports use.
  summarize(): HistogramSummary {
    const empty = this.count === 0;
    return {
      count: this.count,
      mean: empty ? null : this.sum / this.count,
      min: empty ? null : this.min,
      max: empty ? null : this.max,
      p50: this.quantile(0.5),
      p90: this.quantile(0.9),
      p99: this.quantile(0.99),
    };
  }
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.min(Math.max(v, lo), hi);
}
