// The simulated SGLang scheduler: continuous batching with a queue, decode steps timed by the model, tokens in bursts.
import { computeAcceptanceCurve, computeStepMs, type CapacityOk } from './model.js';
import type { SimProfile } from './profile.js';
import type { SimSettings } from './settings.js';
import { createRng, drawAccepted, drawJitter, nextUniform } from './sampler.js';
import { formatDecodeBatch, formatFinish, formatPrefillBatch } from './log-format.js';
import type { SimLogger } from './logger.js';
import {
  decayNewTokenRatio,
  fitsInPool,
  type KvReq,
  formatRetract,
  NEW_TOKEN_RATIO,
  pickRetractions,
  retractedRatio,
} from './kv-budget.js';

/** One generation request inside the scheduler. */
export interface SimRequest {
  rid: string;
  promptTokens: number;
  /** Tokens this request will generate before it finishes (max_tokens, or an earlier natural EOS). */
  targetTokens: number;
  finishReason: 'length' | 'stop';
  /** Warm-up and health probes do not count for faults. */
  internal?: boolean;
  /** Receives each burst of new tokens; `done` on the last one. */
  onTokens: (count: number, done: boolean) => void;
}

interface Running {
  req: SimRequest;
  generated: number;
  verifyCt: number;
  accepted: number;
  u: number;
  startedAt: number;
}

// The KV-budget view of a running request.
function toKvReq(r: Running): KvReq {
  return { promptTokens: r.req.promptTokens, generated: r.generated, targetTokens: r.req.targetTokens };
}

/** Scheduler events that end the process (the lifecycle decides how to die). */
export type SchedulerFault = { kind: 'crash' } | { kind: 'cuda_oom'; batch: number } | { kind: 'hang' };

/** Inputs of the scheduler. */
export interface SchedulerOptions {
  profile: SimProfile;
  settings: SimSettings;
  capacity: CapacityOk;
  logger: SimLogger;
  now: () => number;
  seed: number;
  decodeLogInterval: number;
  faults: { crashAfter?: number; cudaOomBatch?: number; hangAfter?: number };
  onFault: (f: SchedulerFault) => void;
}

/** Timer lag beyond which the step timeline restarts from now (the process was stopped, not just busy); below it, late steps catch up. */
const MAX_LAG_MS = 2000;
/** A late step catches up by shortening the next steps to no less than this share of their time (no token bursts). */
const MIN_STEP_SHARE = 0.2;

// Runs the batch loop on real timers; all request-visible timing comes from the pure model.
export class Scheduler {
  readonly queue: SimRequest[] = [];
  readonly running: Running[] = [];
  finished = 0;
  cumAcceptLen = 0;
  cumVerifyCt = 0;
  lastGenThroughput = 0;
  lastAcceptLen = 0;
  generatedTotal = 0;
  promptTotal = 0;
  stopped = false;
  private readonly curve: number[];
  private readonly rng: () => number;
  private timer: NodeJS.Timeout | null = null;
  private nextAt = 0;
  /** True when the batch is empty: the next step starts from now, not from the previous step's end. */
  private idle = true;
  private forwardCt = 0;
  private interval = { tokens: 0, since: 0, accepted: 0, verify: 0 };
  private newTokenRatio: number = NEW_TOKEN_RATIO.init;
  /** Requests sent back to the queue by a retraction, with their progress (they resume after a new prefill). */
  private readonly retracted = new Map<string, Running>();

  constructor(private readonly o: SchedulerOptions) {
    this.curve = computeAcceptanceCurve(o.profile, o.settings);
    this.rng = createRng(o.seed);
    this.interval.since = o.now();
  }

  // Enqueue a request; it starts at the next step if a slot and KV room are free.
  submit(req: SimRequest): void {
    this.queue.push(req);
    this.promptTotal += req.promptTokens;
    if (!this.timer && !this.stopped) this.schedule(0, () => this.tick());
  }

  // Drop a request whose client went away.
  abort(rid: string): void {
    const qi = this.queue.findIndex((r) => r.rid === rid);
    if (qi >= 0) this.queue.splice(qi, 1);
    const ri = this.running.findIndex((r) => r.req.rid === rid);
    if (ri >= 0) this.running.splice(ri, 1);
  }

  // Ids of every request not yet finished (running first), as the drain watchdog lists them.
  remainingRids(): string[] {
    return [...this.running.map((r) => r.req.rid), ...this.queue.map((r) => r.rid)];
  }

  // KV slots in use: prompt + generated tokens of every running request.
  usedTokens(): number {
    return this.running.reduce((a, r) => a + r.req.promptTokens + r.generated, 0);
  }

  // Stop stepping for good (hang, crash, exit).
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  // Run `fn` delayMs after the previous step ended (absolute timeline: timer lag is made up over the next steps).
  private schedule(delayMs: number, fn: () => void): void {
    const now = this.o.now();
    if (this.idle || this.nextAt < now - MAX_LAG_MS) this.nextAt = now;
    this.idle = false;
    this.nextAt = Math.max(this.nextAt + delayMs, now + delayMs * MIN_STEP_SHARE);
    this.timer = setTimeout(
      () => {
        this.timer = null;
        if (!this.stopped) fn();
      },
      Math.max(0, this.nextAt - now),
    );
  }

  private tick(): void {
    const admitted = this.admit();
    if (admitted.length) return this.runPrefill(admitted);
    if (!this.running.length) {
      this.idle = true;
      return;
    }
    this.retractIfFull();
    const oom = this.o.faults.cudaOomBatch;
    if (oom !== undefined && this.running.length >= oom)
      return this.fail({ kind: 'cuda_oom', batch: this.running.length });
    const ms =
      computeStepMs(this.o.profile, this.o.settings, this.running.length) *
      drawJitter(this.rng, this.o.profile.timing.jitter);
    this.schedule(ms, () => this.finishDecodeStep());
  }

  // Move queued requests into the batch while max_running_requests and the KV pool (with future tokens) allow.
  private admit(): Running[] {
    const out: Running[] = [];
    while (this.queue.length && this.running.length < this.o.capacity.maxRunningRequests) {
      const req = this.queue[0];
      const r = this.retracted.get(req.rid) ?? {
        req,
        generated: 0,
        verifyCt: 0,
        accepted: 0,
        u: this.rng(),
        startedAt: this.o.now(),
      };
      if (
        this.running.length &&
        !fitsInPool(this.running.map(toKvReq), toKvReq(r), this.newTokenRatio, this.o.capacity.maxTotalNumTokens)
      )
        break;
      this.queue.shift();
      this.retracted.delete(req.rid);
      this.running.push(r);
      out.push(r);
    }
    return out;
  }

  // Before a decode step: if the pool cannot take one more step's tokens, send requests back to the queue.
  private retractIfFull(): void {
    const victims = pickRetractions(
      this.running,
      toKvReq,
      this.o.settings.speculative?.numDraftTokens ?? 1,
      this.o.capacity.maxTotalNumTokens,
    );
    if (!victims.length) return;
    for (const v of victims) {
      this.running.splice(this.running.indexOf(v), 1);
      this.retracted.set(v.req.rid, v);
      this.queue.push(v.req);
    }
    const old = this.newTokenRatio;
    this.newTokenRatio = retractedRatio(this.running.map(toKvReq));
    this.o.logger.rank(formatRetract(victims.length, old, this.newTokenRatio));
  }

  // One prefill forward for the newly admitted requests; each gets its first token at the end.
  private runPrefill(batch: Running[]): void {
    const tokens = batch.reduce((a, r) => a + r.req.promptTokens + r.generated, 0);
    const t = this.o.profile.timing;
    this.o.logger.rank(
      formatPrefillBatch(batch.length, tokens, this.usage(), this.running.length - batch.length, this.queue.length),
    );
    this.schedule(t.target_step_ms + t.prefill_ms_per_token * tokens, () => {
      for (const r of batch) if (this.running.includes(r)) this.emit(r, 1);
      if (!this.stopped) this.tick();
    });
  }

  // End of a draft+verify step: every running request gets 1 + accepted tokens.
  private finishDecodeStep(): void {
    this.forwardCt++;
    this.newTokenRatio = decayNewTokenRatio(this.newTokenRatio);
    for (const r of [...this.running]) {
      r.u = nextUniform(r.u);
      const k = this.o.settings.speculative ? drawAccepted(this.curve, r.u) : 0;
      r.verifyCt++;
      r.accepted += k + 1;
      this.interval.accepted += k + 1;
      this.interval.verify++;
      this.cumAcceptLen += k + 1;
      this.cumVerifyCt++;
      this.emit(r, Math.min(k + 1, r.req.targetTokens - r.generated));
    }
    if (this.forwardCt % this.o.decodeLogInterval === 0) this.logDecode();
    if (!this.stopped) this.tick();
  }

  private emit(r: Running, count: number): void {
    r.generated += count;
    this.generatedTotal += count;
    this.interval.tokens += count;
    const done = r.generated >= r.req.targetTokens;
    if (done) this.running.splice(this.running.indexOf(r), 1);
    if (done) this.logFinish(r);
    r.req.onTokens(count, done);
    if (done) this.countFinished(r);
  }

  private logFinish(r: Running): void {
    const spec = this.o.settings.speculative;
    this.o.logger.main(
      formatFinish({
        rid: r.req.rid,
        finishReason: r.req.finishReason,
        promptTokens: r.req.promptTokens,
        completionTokens: r.generated,
        e2eLatency: (this.o.now() - r.startedAt) / 1000,
        specAcceptLength: spec ? r.accepted / Math.max(1, r.verifyCt) : null,
        specVerifyCt: r.verifyCt,
      }),
    );
  }

  // Count a served request and fire the request-count faults.
  private countFinished(r: Running): void {
    if (r.req.internal) return;
    this.finished++;
    const f = this.o.faults;
    if (f.crashAfter !== undefined && this.finished >= f.crashAfter) this.fail({ kind: 'crash' });
    else if (f.hangAfter !== undefined && this.finished >= f.hangAfter) this.fail({ kind: 'hang' });
  }

  private fail(f: SchedulerFault): void {
    this.stop();
    this.o.onFault(f);
  }

  private usage(): number {
    return this.usedTokens() / this.o.capacity.maxTotalNumTokens;
  }

  private logDecode(): void {
    const now = this.o.now();
    const secs = Math.max(1e-3, (now - this.interval.since) / 1000);
    this.lastGenThroughput = this.interval.tokens / secs;
    const spec = this.o.settings.speculative;
    this.lastAcceptLen = this.interval.verify ? this.interval.accepted / this.interval.verify : 0;
    const acceptRate = spec ? this.lastAcceptLen / spec.numDraftTokens : null;
    this.o.logger.rank(
      formatDecodeBatch({
        running: this.running.length,
        tokens: this.usedTokens(),
        tokenUsage: this.usage(),
        acceptLen: spec ? this.lastAcceptLen : null,
        acceptRate,
        genThroughput: this.lastGenThroughput,
        queued: this.queue.length,
      }),
    );
    this.interval = { tokens: 0, since: now, accepted: 0, verify: 0 };
  }
}
