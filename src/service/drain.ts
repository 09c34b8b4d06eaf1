// The drain estimate (pure): how long the requests in flight take to finish, from the tokens they still have to
// produce and the decode rate the engine measures, and the TimeoutStopSec that covers it with a stated margin.

/** SGLang's SIGTERM watchdog checks every 5 s, so a draining server lives at least until the next check. */
export const DRAIN_CHECK_MS = 5000;
/** Per-request inter-token latency assumed when the engine reports no decode rate (a busy large model). */
export const ASSUMED_ITL_MS = 200;
/** Output tokens a request may still have to produce when nothing better is known (the seeds' benchmark asks 3,000). */
export const ASSUMED_OUTPUT_TOKENS = 4096;
/** Margin on the estimate before advising a TimeoutStopSec (the decode rate varies; a kill loses every request). */
export const DRAIN_MARGIN = 1.5;
/** Seconds added on top (process teardown, CUDA context release). */
export const DRAIN_SLACK_SEC = 10;

/** What is in flight and what the engine measured, the inputs of the estimate. */
export interface DrainLoad {
  running: number;
  queued: number;
  /** Aggregate decode rate over the running batch (tokens/s, e.g. SGLang's gen_throughput), null when not measured. */
  genThroughput: number | null;
  /** The engine's batch cap (queued requests start as slots free), null when unknown. */
  maxRunning: number | null;
  /** Tokens each in-flight request still has to produce, when known (a benchmark's max_tokens minus tokens received). */
  remainingTokens?: readonly number[] | null;
  /** Output tokens assumed left per request when they are not known (default ASSUMED_OUTPUT_TOKENS). */
  assumedOutputTokens?: number;
}

/** The estimate with the figures it rests on. */
export interface DrainFigures {
  drainMs: number;
  /** Tokens the longest request still has to produce. */
  longestTokens: number;
  /** Decode rate of one request at the current batch (tokens/s). */
  perRequestTps: number;
  /** The decode rate was measured by the engine (not assumed). */
  rateMeasured: boolean;
  /** The remaining tokens were known (not assumed). */
  tokensKnown: boolean;
  /** Batches the in-flight requests need (queued ones wait for a slot). */
  waves: number;
  /** The estimate in words, e.g. "16 requests, the longest 3000 tokens left (known), at 85.3 tok/s per request (measured: 1365 tok/s over 16)". */
  basis: string;
}

// Estimate the drain: the longest request's remaining tokens at one request's decode rate (requests decode in
// parallel, so the longest one sets the time; the per-request rate only rises as the batch empties, which keeps this
// an upper bound), once per wave of queued requests, never less than all remaining tokens at the aggregate rate.
export function estimateDrainMs(l: DrainLoad): DrainFigures {
  const inFlight = Math.max(0, l.running) + Math.max(0, l.queued);
  const known = l.remainingTokens && l.remainingTokens.length >= inFlight && inFlight > 0 ? l.remainingTokens : null;
  const assumed = l.assumedOutputTokens ?? ASSUMED_OUTPUT_TOKENS;
  const longestTokens = known ? Math.max(0, ...known) : assumed;
  const rateMeasured = l.genThroughput !== null && l.genThroughput > 0;
  const perRequestTps = rateMeasured ? l.genThroughput! / Math.max(1, l.running) : 1000 / ASSUMED_ITL_MS;
  const slots = Math.max(1, l.maxRunning ?? l.running);
  const waves = inFlight === 0 ? 0 : Math.max(1, Math.ceil(inFlight / slots));
  const totalTokens = known ? known.reduce((a, b) => a + Math.max(0, b), 0) : inFlight * assumed;
  const aggregateTps = rateMeasured ? l.genThroughput! : perRequestTps * Math.max(1, l.running);
  const decodeMs = Math.max((waves * longestTokens * 1000) / perRequestTps, (totalTokens * 1000) / aggregateTps);
  const drainMs = inFlight === 0 ? 0 : DRAIN_CHECK_MS + Math.ceil(decodeMs);
  const tokens = known
    ? `the longest ${longestTokens} tokens left (known)`
    : `up to ${longestTokens} tokens left each (assumed: the engine does not report remaining tokens)`;
  const rate = rateMeasured
    ? `${round1(perRequestTps)} tok/s per request (measured: ${round1(l.genThroughput!)} tok/s over ${Math.max(1, l.running)})`
    : `${round1(perRequestTps)} tok/s per request (assumed ${ASSUMED_ITL_MS} ms per token: the engine reports no decode rate)`;
  const wavesText = waves > 1 ? `, ${waves} batches of ${slots}` : '';
  return {
    drainMs,
    longestTokens,
    perRequestTps,
    rateMeasured,
    tokensKnown: !!known,
    waves,
    basis: `${inFlight} requests, ${tokens}, at ${rate}${wavesText}`,
  };
}

// The TimeoutStopSec that covers a drain: the estimate × DRAIN_MARGIN + DRAIN_SLACK_SEC, in whole seconds.
export function adviseTimeoutStopSec(drainMs: number): number {
  return Math.ceil((drainMs * DRAIN_MARGIN) / 1000) + DRAIN_SLACK_SEC;
}

/** The margin in words, for the advice line. */
export const MARGIN_TEXT = `×${DRAIN_MARGIN} margin + ${DRAIN_SLACK_SEC} s teardown`;

// One decimal.
function round1(n: number): number {
  return Math.round(n * 10) / 10;
}
