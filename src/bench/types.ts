// Result types of `spectune bench`, shared with the tuner, the store and the reports.
import type { TransportName } from './transport.js';

/** mean/p50/p90/p99 of one metric (null when there were no samples). */
export interface Summary {
  mean: number | null;
  p50: number | null;
  p90: number | null;
  p99: number | null;
}

/** Errors of one level, by the phase in which they happened. */
export interface BenchErrors {
  connect: number;
  httpStatus: number;
  firstTokenTimeout: number;
  stall: number;
  endedEarly: number;
  other: number;
}

/** One concurrency level (or one open-loop rate) of a benchmark. */
export interface BenchRun {
  concurrency: number;
  /** Open-loop Poisson rate in requests/s, or null for closed loop. */
  rate: number | null;
  requests: { ok: number; failed: number };
  durationMs: number;
  outputTokensPerSec: number;
  requestsPerSec: number;
  ttftMs: Summary;
  itlMs: Summary;
  e2eMs: Summary;
  decodeTokensPerSec: Summary;
  /** Tokens per target step under speculative decoding (1 + accepted drafts per step); null without speculation. */
  acceptLength: number | null;
  /** Accepted / drafted tokens, when the engine reports both. */
  acceptRate?: number | null;
  /** Where the acceptance came from: the engine's metrics, or the streams' own per-request timings (llama-server). */
  acceptSource?: 'metrics' | 'stream' | null;
  /** Token counts came from the server's usage (true) or from counting chunks (false). */
  usageFromServer: boolean;
  /** Token frames that arrived in the same read as the frame before them, so without an arrival time of their own
   *  (their gap counts as 0 ms): the server sent them together, or the client read the socket late. */
  sharedReadFrames?: number;
  errors: BenchErrors;
  /** Engine view scraped before/after the level (metrics endpoints). */
  engine: {
    before: Record<string, number | null> | null;
    after: Record<string, number | null> | null;
    /** Scraped once half of the level was done: running requests and KV usage under load. */
    during?: Record<string, number | null> | null;
  };
  /** Why the level stopped early, if it did. */
  stoppedEarly: string | null;
}

/** Raw per-request sample, stored so that reports can be recomputed. */
export interface RequestSample {
  id: string;
  concurrency: number;
  ok: boolean;
  errorPhase: keyof BenchErrors | null;
  error: string | null;
  startMs: number;
  /** Wall-clock start (epoch ms, sub-ms precise with the default clock), to match the server's logs. */
  startEpochMs?: number;
  ttftMs: number | null;
  e2eMs: number | null;
  outputTokens: number;
  inputTokens: number | null;
  decodeTokensPerSec: number | null;
}

/** The full benchmark result. */
export interface BenchResult {
  url: string;
  api: 'chat' | 'completions' | 'sglang';
  model: string | null;
  /** How the streams were read: native reader (kernel receive stamps), JS sockets, or node:https. */
  transport?: TransportName;
  /** How every level started from the same prefix-cache state (the cache policy's description). */
  cachePolicy?: string;
  runs: BenchRun[];
  /** Levels asked for but not run (the saturation guard, or a level that stopped early), each with why. */
  skipped?: { concurrency: number; reason: string }[];
}
