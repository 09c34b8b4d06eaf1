// Per-request timelines and per-level aggregates; pure: every timestamp is passed in by the caller.
import { redactText } from '../redact.js';
import { LogHistogram } from './histogram.js';
import type { BenchErrors, RequestSample, Summary } from './types.js';

// Initial room for inter-token gaps; grows by doubling, so one request allocates O(log n) times.
const INITIAL_GAPS = 256;

/** Timestamps of one streamed request (ms, from the injected clock). */
export class RequestTimeline {
  readonly startMs: number;
  firstMs = -1;
  lastMs = -1;
  frames = 0;
  /** Frames that arrived in one read with the frame before them: no arrival time of their own (gap 0). */
  shared = 0;
  gaps: Float64Array;
  nGaps = 0;

  constructor(startMs: number, expectedFrames = INITIAL_GAPS) {
    this.startMs = startMs;
    this.gaps = new Float64Array(Math.max(8, expectedFrames));
  }

  // Note n token-bearing frames that arrived together at time t; the extra ones have a zero gap.
  onFrames(n: number, t: number): void {
    let i = 0;
    // Frames stamped like the one before them came in the same read (possibly through several HTTP chunks).
    this.shared += this.firstMs >= 0 && t === this.lastMs ? n : n - 1;
    if (this.firstMs < 0) {
      this.firstMs = t;
      i = 1;
    }
    for (; i < n; i++) {
      this.pushGap(t - this.lastMs);
      this.lastMs = t;
    }
    this.lastMs = t;
    this.frames += n;
  }

  private pushGap(g: number): void {
    if (this.nGaps === this.gaps.length) {
      const bigger = new Float64Array(this.gaps.length * 2);
      bigger.set(this.gaps);
      this.gaps = bigger;
    }
    this.gaps[this.nGaps++] = g;
  }
}

/** How a request ended, as the transport saw it. */
export interface RequestOutcome {
  id: string;
  ok: boolean;
  errorPhase: keyof BenchErrors | null;
  error: string | null;
  endMs: number;
  /** Server-reported completion tokens, or -1 when the server sent no usage. */
  completionTokens: number;
  promptTokens: number;
  /** llama-server's per-request draft counts from the final chunk's `timings` (-1 when absent). */
  draft?: { drafted: number; accepted: number; predicted: number };
}

// Build the stored sample of one request: TTFT, E2E and decode tok/s = (tokens - 1) / (last - first).
export function buildSample(
  tl: RequestTimeline,
  out: RequestOutcome,
  concurrency: number,
  originMs: number,
  epochOffsetMs = 0,
): RequestSample {
  const tokens = out.completionTokens >= 0 ? out.completionTokens : tl.frames;
  const span = tl.lastMs - tl.firstMs;
  return {
    id: out.id,
    concurrency,
    ok: out.ok,
    errorPhase: out.errorPhase,
    // Server error bodies can echo credentials; samples are stored, so they are scrubbed here.
    error: out.error === null ? null : redactText(out.error),
    startMs: tl.startMs - originMs,
    startEpochMs: tl.startMs + epochOffsetMs,
    ttftMs: tl.firstMs >= 0 ? tl.firstMs - tl.startMs : null,
    e2eMs: out.ok ? out.endMs - tl.startMs : null,
    outputTokens: tokens,
    inputTokens: out.promptTokens >= 0 ? out.promptTokens : null,
    decodeTokensPerSec: tokens > 1 && span > 0 ? ((tokens - 1) * 1000) / span : null,
  };
}

// Zeroed error counters.
export function emptyErrors(): BenchErrors {
  return { connect: 0, httpStatus: 0, firstTokenTimeout: 0, stall: 0, endedEarly: 0, other: 0 };
}

/** Running aggregate of one level: histograms, counts, errors and the measured window. */
export class LevelStats {
  readonly ttft = new LogHistogram();
  readonly itl = new LogHistogram();
  readonly e2e = new LogHistogram();
  readonly decode = new LogHistogram();
  readonly errors = emptyErrors();
  ok = 0;
  failed = 0;
  outputTokens = 0;
  usageMissing = 0;
  /** Sums of llama-server's per-request `timings` over successful requests that carried draft counts. */
  draft = { requests: 0, drafted: 0, accepted: 0, predicted: 0 };
  /** Token frames of successful requests, and those that shared a read with the frame before them. */
  frames = 0;
  sharedFrames = 0;
  lastError: string | null = null;
  lastErrorPhase: keyof BenchErrors | null = null;
  firstStartMs = Infinity;
  lastEndMs = -Infinity;

  // Fold one finished request in; only successful requests feed the latency histograms.
  add(tl: RequestTimeline, out: RequestOutcome, sample: RequestSample): void {
    if (tl.startMs < this.firstStartMs) this.firstStartMs = tl.startMs;
    if (out.endMs > this.lastEndMs) this.lastEndMs = out.endMs;
    this.outputTokens += sample.outputTokens;
    if (!out.ok) {
      this.failed++;
      this.errors[out.errorPhase ?? 'other']++;
      this.lastError = out.error;
      this.lastErrorPhase = out.errorPhase;
      return;
    }
    this.ok++;
    if (out.completionTokens < 0) this.usageMissing++;
    if (out.draft && out.draft.drafted >= 0 && out.draft.accepted >= 0) {
      this.draft.requests++;
      this.draft.drafted += out.draft.drafted;
      this.draft.accepted += out.draft.accepted;
      this.draft.predicted += Math.max(0, out.draft.predicted);
    }
    this.frames += tl.frames;
    this.sharedFrames += tl.shared;
    if (sample.ttftMs !== null) this.ttft.record(sample.ttftMs);
    if (sample.e2eMs !== null) this.e2e.record(sample.e2eMs);
    if (sample.decodeTokensPerSec !== null) this.decode.record(sample.decodeTokensPerSec);
    this.itl.recordAll(tl.gaps, tl.nGaps);
  }

  // Length of the measured window: first request start to last request end.
  durationMs(): number {
    return this.lastEndMs > this.firstStartMs ? this.lastEndMs - this.firstStartMs : 0;
  }
}

// Summary (mean/p50/p90/p99) of a histogram, rounded for reports.
export function summarizeHistogram(h: LogHistogram, digits = 3): Summary {
  const s = h.summarize();
  return {
    mean: round(s.mean, digits),
    p50: round(s.p50, digits),
    p90: round(s.p90, digits),
    p99: round(s.p99, digits),
  };
}

// Round to a number of decimals, keeping null.
export function round(v: number | null, digits: number): number | null {
  if (v === null || !Number.isFinite(v)) return null;
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}
