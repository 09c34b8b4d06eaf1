// Safe stop: before spectune stops or restarts a unit, its own benchmark is finished or cancelled (quiesce), the
// engine's in-flight requests are counted, the drain is estimated against TimeoutStopSec, and spectune waits for
// the requests to finish so that its own stop never ends in "State 'stop-sigterm' timed out. Killing."
import type { EngineMetrics } from '../engines/types.js';

/** SGLang's SIGTERM watchdog checks every 5 s, so a draining server lives at least until the next check. */
const DRAIN_CHECK_MS = 5000;
/** Output tokens a running request still has to produce, when nothing better is known (half a 512-token answer). */
const ASSUMED_REMAINING_TOKENS = 256;
/** Aggregate decode speed assumed when the engine does not report one (a slow, loaded single GPU). */
const FALLBACK_TOKENS_PER_SEC = 50;
/** Margin on the estimate before suggesting a TimeoutStopSec (estimates are rough; a kill loses requests). */
const STOP_MARGIN = 1.5;
/** Extra seconds on top of the suggested TimeoutStopSec (process teardown, CUDA context release). */
const STOP_SLACK_SEC = 10;

/** What is in flight and how long a stop should take. */
export interface DrainEstimate {
  running: number | null;
  queued: number | null;
  /** Expected drain time in ms (0 when idle; null when the engine could not be asked). */
  drainMs: number | null;
  timeoutStopMs: number | null;
  /** The drain is expected to outlast TimeoutStopSec: systemd would SIGKILL mid-drain. */
  exceeds: boolean;
  /** The suggested TimeoutStopSec (seconds) when `exceeds`. */
  suggestedTimeoutStopSec: number | null;
}

// Estimate the drain from the engine's metrics and compare it with the unit's TimeoutStopSec.
export function estimateDrain(metrics: EngineMetrics | null, timeoutStopMs: number | null): DrainEstimate {
  const running = metrics?.runningRequests ?? null;
  const queued = metrics?.queuedRequests ?? null;
  if (running === null && queued === null) {
    return { running, queued, drainMs: null, timeoutStopMs, exceeds: false, suggestedTimeoutStopSec: null };
  }
  const inFlight = (running ?? 0) + (queued ?? 0);
  const speed = metrics?.genThroughput && metrics.genThroughput > 0 ? metrics.genThroughput : FALLBACK_TOKENS_PER_SEC;
  const drainMs = inFlight === 0 ? 0 : DRAIN_CHECK_MS + Math.ceil((inFlight * ASSUMED_REMAINING_TOKENS * 1000) / speed);
  const exceeds = timeoutStopMs !== null && drainMs > timeoutStopMs;
  const suggested = exceeds ? Math.ceil((drainMs * STOP_MARGIN) / 1000) + STOP_SLACK_SEC : null;
  return { running, queued, drainMs, timeoutStopMs, exceeds, suggestedTimeoutStopSec: suggested };
}

// The operator-facing warning for a drain longer than TimeoutStopSec, with the fix.
export function describeDrainRisk(unit: string, est: DrainEstimate): string | null {
  if (!est.exceeds || est.drainMs === null || est.timeoutStopMs === null) return null;
  return `${unit}: ${est.running ?? 0} running + ${est.queued ?? 0} queued requests need ~${Math.ceil(est.drainMs / 1000)} s to drain, `
    + `longer than TimeoutStopSec=${Math.round(est.timeoutStopMs / 1000)}s: a stop now ends in SIGKILL ("State 'stop-sigterm' timed out"). `
    + `Fix: add TimeoutStopSec=${est.suggestedTimeoutStopSec} to the drop-in (spectune apply --timeout-stop-sec ${est.suggestedTimeoutStopSec}).`;
}

/** How prepareStop reaches the engine and reports. */
export interface StopContext {
  unit: string;
  timeoutStopMs: number | null;
  readMetrics(): Promise<EngineMetrics | null>;
  warn(message: string): void;
  info(message: string): void;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Poll the engine's in-flight count this often while waiting for the drain. */
const DRAIN_POLL_MS = 1000;
/** Never wait longer than this for requests to finish before stopping anyway (with a warning). */
export const MAX_DRAIN_WAIT_MS = 10 * 60_000;

// Quiesce spectune's own load, then wait until the engine has no request in flight (or the wait bound is hit).
export async function prepareStop(ctx: StopContext, opts: { quiesce?: () => Promise<void>; signal?: AbortSignal; maxWaitMs?: number }): Promise<DrainEstimate> {
  if (opts.quiesce) {
    ctx.info(`${ctx.unit}: finishing spectune's own benchmark before stopping`);
    await opts.quiesce();
  }
  const first = estimateDrain(await ctx.readMetrics(), ctx.timeoutStopMs);
  const risk = describeDrainRisk(ctx.unit, first);
  if (risk) ctx.warn(risk);
  const deadline = Date.now() + (opts.maxWaitMs ?? MAX_DRAIN_WAIT_MS);
  let est = first;
  while ((est.running ?? 0) + (est.queued ?? 0) > 0 && Date.now() < deadline && !opts.signal?.aborted) {
    ctx.info(`${ctx.unit}: waiting for ${est.running ?? 0} running and ${est.queued ?? 0} queued requests to finish before stopping`);
    await ctx.sleep(DRAIN_POLL_MS, opts.signal);
    est = estimateDrain(await ctx.readMetrics(), ctx.timeoutStopMs);
  }
  if ((est.running ?? 0) + (est.queued ?? 0) > 0) ctx.warn(`${ctx.unit}: stopping with ${est.running ?? 0} requests still in flight (waited the maximum)`);
  return first;
}
