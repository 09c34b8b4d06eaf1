// Safe stop: before spectune stops or restarts a unit, its own benchmark is finished or cancelled (quiesce), the
// engine's in-flight requests are counted, the drain is estimated against TimeoutStopSec, and spectune waits for
// the requests to finish so that its own stop never ends in "State 'stop-sigterm' timed out. Killing."
import type { EngineMetrics } from '../engines/types.js';
import { adviseTimeoutStopSec, estimateDrainMs, MARGIN_TEXT } from './drain.js';

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
  /** What the estimate rests on, in words (null when the engine could not be asked). */
  basis: string | null;
}

/** What spectune knows of the in-flight requests beyond the engine's metrics. */
export interface DrainKnown {
  /** Tokens each in-flight request still has to produce (a benchmark's requests). */
  remainingTokens?: readonly number[] | null;
  /** Output tokens assumed left per request when not known (e.g. benchmark.outputTokens). */
  assumedOutputTokens?: number;
}

// Estimate the drain from the engine's metrics (and the remaining tokens, when known) against TimeoutStopSec.
export function estimateDrain(
  metrics: EngineMetrics | null,
  timeoutStopMs: number | null,
  known: DrainKnown = {},
): DrainEstimate {
  const running = metrics?.runningRequests ?? null;
  const queued = metrics?.queuedRequests ?? null;
  if (running === null && queued === null) {
    return {
      running,
      queued,
      drainMs: null,
      timeoutStopMs,
      exceeds: false,
      suggestedTimeoutStopSec: null,
      basis: null,
    };
  }
  const f = estimateDrainMs({
    running: running ?? 0,
    queued: queued ?? 0,
    genThroughput: metrics?.genThroughput ?? null,
    maxRunning: metrics?.maxRunningRequests ?? null,
    ...known,
  });
  const exceeds = timeoutStopMs !== null && f.drainMs > timeoutStopMs;
  return {
    running,
    queued,
    drainMs: f.drainMs,
    timeoutStopMs,
    exceeds,
    suggestedTimeoutStopSec: exceeds ? adviseTimeoutStopSec(f.drainMs) : null,
    basis: f.basis,
  };
}

// The operator-facing warning for a drain longer than TimeoutStopSec, with the fix.
export function describeDrainRisk(unit: string, est: DrainEstimate): string | null {
  if (!est.exceeds || est.drainMs === null || est.timeoutStopMs === null) return null;
  return (
    `${unit}: ${est.running ?? 0} running + ${est.queued ?? 0} queued requests need ~${Math.ceil(est.drainMs / 1000)} s to drain (${est.basis}), ` +
    `longer than TimeoutStopSec=${Math.round(est.timeoutStopMs / 1000)}s: a stop now ends in SIGKILL ("State 'stop-sigterm' timed out"). ` +
    `Fix: add TimeoutStopSec=${est.suggestedTimeoutStopSec} (the estimate ${MARGIN_TEXT}) to the drop-in (spectune apply --timeout-stop-sec ${est.suggestedTimeoutStopSec}).`
  );
}

/** How prepareStop reaches the engine and reports. */
export interface StopContext {
  unit: string;
  timeoutStopMs: number | null;
  readMetrics(): Promise<EngineMetrics | null>;
  warn(message: string): void;
  info(message: string): void;
  /** The drain's progress (the controller turns it into a service:drain event). */
  progress?(p: { running: number; queued: number; waitedMs: number; deadlineTs: number; note: string | null }): void;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** What is known of the in-flight requests (their remaining tokens, or the bound to assume). */
  known?: DrainKnown;
}

/** Poll the engine's in-flight count this often while waiting for the drain. */
const DRAIN_POLL_MS = 1000;
/** Never wait longer than this for requests to finish before stopping anyway (with a warning); --drain-timeout and
 *  target.drainTimeout override it. */
export const MAX_DRAIN_WAIT_MS = 10 * 60_000;
/** A progress line at most this often while the counts stay the same (a piped log gets no line per poll). */
export const DRAIN_LINE_EVERY_MS = 15_000;
/** Still busy after this long: live traffic, most likely; say what helps. */
const LIVE_TRAFFIC_AFTER_MS = 60_000;
/** What helps when live traffic never lets the engine drain. */
export const LIVE_TRAFFIC_NOTE =
  'still busy: live traffic keeps arriving? take the host out of the load balancer first with target.hooks.preStop (and back in with target.hooks.postReady), or shorten the wait with --drain-timeout / target.drainTimeout';

// "9m41s" / "41s".
function formatLeft(ms: number): string {
  const s = Math.max(0, Math.ceil(ms / 1000));
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

// Quiesce spectune's own load, then wait until the engine has no request in flight (or the wait bound is hit).
export async function prepareStop(
  ctx: StopContext,
  opts: { quiesce?: () => Promise<void>; signal?: AbortSignal; maxWaitMs?: number },
): Promise<DrainEstimate> {
  if (opts.quiesce) {
    ctx.info(`${ctx.unit}: finishing spectune's own benchmark before stopping`);
    await opts.quiesce();
  }
  const first = estimateDrain(await ctx.readMetrics(), ctx.timeoutStopMs, ctx.known);
  const risk = describeDrainRisk(ctx.unit, first);
  if (risk) ctx.warn(risk);
  const timeoutMs = opts.maxWaitMs ?? MAX_DRAIN_WAIT_MS;
  const startedAt = Date.now();
  const deadline = startedAt + timeoutMs;
  let est = first;
  let lastKey = '';
  let lastLineAt = 0;
  while ((est.running ?? 0) + (est.queued ?? 0) > 0 && Date.now() < deadline && !opts.signal?.aborted) {
    const now = Date.now();
    const key = `${est.running ?? 0}/${est.queued ?? 0}`;
    if (key !== lastKey || now - lastLineAt >= DRAIN_LINE_EVERY_MS) {
      const waitedMs = now - startedAt;
      const p = {
        running: est.running ?? 0,
        queued: est.queued ?? 0,
        waitedMs,
        deadlineTs: deadline,
        note: waitedMs >= LIVE_TRAFFIC_AFTER_MS ? LIVE_TRAFFIC_NOTE : null,
      };
      if (ctx.progress) ctx.progress(p);
      else
        ctx.info(
          `${ctx.unit}: waiting for ${p.running} running and ${p.queued} queued requests to finish before stopping, ${formatLeft(deadline - now)} left`,
        );
      lastKey = key;
      lastLineAt = now;
    }
    await ctx.sleep(DRAIN_POLL_MS, opts.signal);
    est = estimateDrain(await ctx.readMetrics(), ctx.timeoutStopMs);
  }
  if ((est.running ?? 0) + (est.queued ?? 0) > 0 && !opts.signal?.aborted) {
    ctx.warn(
      `${ctx.unit}: stopping with ${est.running ?? 0} running and ${est.queued ?? 0} queued requests still in flight after the drain timeout of ${formatLeft(timeoutMs)} ` +
        `(--drain-timeout / target.drainTimeout); if live traffic never lets it drain, take the host out of the load balancer first: target.hooks.preStop and target.hooks.postReady`,
    );
  }
  return first;
}
