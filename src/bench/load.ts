// Load generation for one level: closed-loop workers or open-loop Poisson arrivals, a watchdog for the phase
// timeouts, and the early-stop rules. Numbers are folded into LevelStats as requests finish.
import type { BenchEventSink } from './events.js';
import { planRequest, type BenchPrompt } from './api.js';
import { buildSample, LevelStats, round } from './metrics.js';
import type { ResolvedBenchOptions } from './options.js';
import type { InFlight, Transport } from './transport.js';
import type { RequestSample } from './types.js';

// Do not judge the error rate on fewer requests than this: one early failure is not a trend.
const MIN_REQUESTS_FOR_ERROR_STOP = 8;
// Progress events at most this often: a terminal redraw rate, negligible cost at any concurrency.
const PROGRESS_MS = 250;
// Watchdog granularity bounds: fine enough for short test timeouts, coarse enough to cost nothing.
const WATCHDOG_MIN_MS = 5;
const WATCHDOG_MAX_MS = 250;
// Open loop: a backlog this many times the in-flight cap means arrivals outpace the server for good.
const BACKLOG_FACTOR = 2;

/** What a level needs from the run around it. */
export interface LevelContext {
  opts: ResolvedBenchOptions;
  transport: Transport;
  url: URL;
  nextId: () => string;
  nextPrompt: (id: string) => BenchPrompt;
  /** The body fields the cache policy adds to every request (llama.cpp `cache_prompt: false`). */
  extraFields?: Record<string, unknown>;
  /** Whether the engine's cache reset endpoint is still worth calling (false after it failed once). */
  cacheReset?: { available: boolean };
  onEvent: BenchEventSink;
  signal?: AbortSignal;
  /** Called once when half of the level is done (mid-level engine scrape). */
  onHalfway?: () => void;
}

/** Outcome of one level (or of its warm-up, when not measured). */
export interface LevelOutcome {
  stats: LevelStats;
  samples: RequestSample[];
  stoppedEarly: string | null;
}

/** How much work a level does: a request count or a wall-clock budget. */
export interface LevelBudget {
  requests: number | null;
  durationMs: number | null;
}

// Run one level. Measured levels record samples and emit progress; warm-ups only exercise the server.
export async function runLevel(
  ctx: LevelContext,
  concurrency: number,
  budget: LevelBudget,
  measured: boolean,
): Promise<LevelOutcome> {
  const run = new LevelRun(ctx, concurrency, budget, measured);
  const watchdog = setInterval(() => run.tick(), watchdogInterval(ctx.opts));
  const onAbort = (): void => run.abort();
  ctx.signal?.addEventListener('abort', onAbort);
  // a signal aborted before this level began never fires 'abort' again: such a level issues nothing
  if (ctx.signal?.aborted) run.abort();
  try {
    if (ctx.opts.rate !== null) await run.openLoop(ctx.opts.rate);
    else await run.closedLoop();
  } finally {
    clearInterval(watchdog);
    ctx.signal?.removeEventListener('abort', onAbort);
  }
  return { stats: run.stats, samples: run.samples, stoppedEarly: run.stopReason };
}

function watchdogInterval(o: ResolvedBenchOptions): number {
  const shortest = Math.min(o.timeouts.connect, o.timeouts.firstToken, o.timeouts.stall);
  return Math.min(WATCHDOG_MAX_MS, Math.max(WATCHDOG_MIN_MS, Math.floor(shortest / 4)));
}

class LevelRun {
  readonly stats = new LevelStats();
  readonly samples: RequestSample[] = [];
  readonly inflight = new Set<InFlight>();
  stopReason: string | null = null;
  /** Runs the open loop's next step at once (set while the loop waits for an arrival). */
  private wake: (() => void) | null = null;
  private issued = 0;
  private finished = 0;
  private halfwayFired = false;
  private lastProgressMs = -Infinity;
  private readonly originMs: number;
  private readonly deadlineMs: number;

  constructor(
    private readonly ctx: LevelContext,
    private readonly concurrency: number,
    private readonly budget: LevelBudget,
    private readonly measured: boolean,
  ) {
    this.originMs = ctx.opts.now();
    this.deadlineMs = budget.durationMs !== null ? this.originMs + budget.durationMs : Infinity;
  }

  private mayIssue(): boolean {
    if (this.stopReason !== null) return false;
    if (this.budget.requests !== null) return this.issued < this.budget.requests;
    return this.ctx.opts.now() < this.deadlineMs;
  }

  async closedLoop(): Promise<void> {
    const worker = async (): Promise<void> => {
      while (this.mayIssue()) await this.runOne(null);
    };
    await Promise.all(Array.from({ length: this.concurrency }, worker));
  }

  // Poisson arrivals against absolute times; latency counts from the scheduled arrival, so client-side queueing
  // behind the in-flight cap is charged to the server, as a user would experience it.
  async openLoop(rate: number): Promise<void> {
    const rand = createExpSource(this.ctx.opts.seed + this.concurrency);
    const backlog: number[] = [];
    const all: Promise<void>[] = [];
    let next = this.ctx.opts.now();
    await new Promise<void>((resolve) => {
      const step = (): void => {
        const now = this.ctx.opts.now();
        while (next <= now && this.mayIssue()) {
          backlog.push(next);
          this.issued++;
          next += (rand() * 1000) / rate;
        }
        while (backlog.length > 0 && this.inflight.size < this.concurrency)
          all.push(this.runOne(backlog.shift()!, false));
        if (backlog.length > BACKLOG_FACTOR * this.concurrency) {
          this.stop(
            `server saturated: ${backlog.length} arrivals waiting at ${rate} req/s with ${this.concurrency} in flight`,
          );
        }
        if (this.stopReason !== null) backlog.length = 0;
        if (!this.mayIssue() && backlog.length === 0) return resolve();
        const timer = setTimeout(step, backlog.length > 0 ? 1 : Math.max(0, next - now));
        // A stop (errors, abort) ends the loop now, not at the next arrival.
        this.wake = () => {
          clearTimeout(timer);
          step();
        };
      };
      step();
    });
    this.wake = null;
    await Promise.all(all);
  }

  private async runOne(scheduledMs: number | null, count = true): Promise<void> {
    if (count) this.issued++;
    const o = this.ctx.opts;
    const id = this.ctx.nextId();
    const plan = planRequest(
      o.api,
      o.model,
      this.ctx.nextPrompt(id),
      id,
      o.outputTokens,
      o.apiKey,
      this.ctx.extraFields,
    );
    const f = this.ctx.transport.send(this.ctx.url, plan, id, o.now, o.outputTokens + 2, scheduledMs);
    this.inflight.add(f);
    const out = await f.done;
    this.inflight.delete(f);
    this.finished++;
    const sample = buildSample(f.timeline, out, this.concurrency, this.originMs, o.epochOffsetMs);
    this.stats.add(f.timeline, out, sample);
    this.checkErrors(out.error);
    if (!this.measured) return;
    this.samples.push(sample);
    this.maybeHalfway();
  }

  private checkErrors(lastError: string | null): void {
    const { ok, failed } = this.stats;
    // A refused connection before any request got through: the server is not there, and waiting for more
    // failures could take long (an open loop at 0.001 req/s waited 1000 s per arrival; the fuzz suite's find).
    if (ok === 0 && this.stats.lastErrorPhase === 'connect' && /ECONNREFUSED/.test(lastError ?? '')) {
      this.stop(`the server refused the connection: ${lastError}`);
      return;
    }
    if (failed >= MIN_REQUESTS_FOR_ERROR_STOP && failed / (ok + failed) >= this.ctx.opts.maxErrorFraction) {
      const pct = Math.round((100 * failed) / (ok + failed));
      this.stop(`${failed} of ${ok + failed} requests failed (${pct}%); last error: ${lastError ?? 'unknown'}`);
    }
  }

  private maybeHalfway(): void {
    if (this.halfwayFired || !this.ctx.onHalfway) return;
    const half =
      this.budget.requests !== null
        ? this.finished >= this.budget.requests / 2
        : this.ctx.opts.now() >= (this.originMs + this.deadlineMs) / 2;
    if (half) {
      this.halfwayFired = true;
      this.ctx.onHalfway();
    }
  }

  stop(reason: string): void {
    if (this.stopReason !== null) return;
    this.stopReason = reason;
    const wake = this.wake;
    if (wake)
      queueMicrotask(() => {
        if (this.wake === wake) wake();
      });
    if (this.measured)
      this.ctx.onEvent({ type: 'bench:stopped', ts: Date.now(), concurrency: this.concurrency, reason });
  }

  abort(): void {
    this.stop('aborted');
    for (const f of this.inflight) f.fail('other', 'aborted');
  }

  // Watchdog: enforce the phase timeouts and emit rate-limited progress.
  tick(): void {
    const now = this.ctx.opts.now();
    const t = this.ctx.opts.timeouts;
    let liveFrames = 0;
    let waitingMs: number | null = null;
    for (const f of this.inflight) {
      liveFrames += f.timeline.frames;
      const since = now - f.timeline.startMs;
      if (f.phase === 'connect' || f.phase === 'first') waitingMs = Math.max(waitingMs ?? 0, since);
      if (f.phase === 'connect' && since > t.connect) f.fail('connect', `no connection after ${t.connect} ms`);
      else if (f.phase === 'first' && since > t.firstToken)
        f.fail('firstTokenTimeout', `no token after ${t.firstToken} ms`);
      else if (f.phase === 'stream' && now - f.lastActivityMs > t.stall)
        f.fail('stall', `no token for ${t.stall} ms after ${f.timeline.frames} token frames`);
    }
    if (now - this.lastProgressMs >= PROGRESS_MS) this.emitProgress(now, liveFrames, waitingMs);
  }

  // Progress counts the frames of requests still streaming too, so the rate does not saw-tooth with completions.
  // Warm-ups report too: a server that hangs before its first token must not look like a silent spectune.
  private emitProgress(now: number, liveFrames: number, waitingMs: number | null): void {
    this.lastProgressMs = now;
    const elapsed = now - this.originMs;
    this.ctx.onEvent({
      type: 'bench:progress',
      ts: Date.now(),
      concurrency: this.concurrency,
      done: this.finished,
      total: this.budget.requests,
      outputTokensPerSec: elapsed > 0 ? round(((this.stats.outputTokens + liveFrames) * 1000) / elapsed, 1) : null,
      phase: this.measured ? 'measure' : 'warmup',
      inFlight: this.inflight.size,
      waitingMs: waitingMs === null ? null : Math.round(waitingMs),
      firstTokenTimeoutMs: this.ctx.opts.timeouts.firstToken,
    });
  }
}

// Exponential inter-arrival factors (mean 1) from a seeded PRNG.
function createExpSource(seed: number): () => number {
  let a = seed >>> 0 || 1;
  return () => {
    a ^= a << 13;
    a >>>= 0;
    a ^= a >>> 17;
    a ^= a << 5;
    a >>>= 0;
    return -Math.log(1 - a / 4294967296);
  };
}
