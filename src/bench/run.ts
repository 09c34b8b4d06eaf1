// runBench: the library entry point the CLI and the tuner share — levels in order, warm-up, engine scrapes,
// one BenchRun per level, the same events for every caller.
import { ToolError } from '../errors.js';
import { ignoreEvents } from '../events.js';
import type { BenchEventSink } from './events.js';
import { redactText } from '../redact.js';
import { joinUrl, planRequest, type BenchPrompt } from './api.js';
import { applyPromptPolicy, createRunNonce, resetEngineCache } from './cache.js';
import { runLevel, type LevelContext, type LevelOutcome } from './load.js';
import { type LevelStats, round, summarizeHistogram } from './metrics.js';
import { defaultRequests, resolveBenchOptions, type BenchOptions, type ResolvedBenchOptions } from './options.js';
import { computeAcceptance, type EngineView } from './prometheus.js';
import { loadShippedCorpus } from './prompt-files.js';
import { createListPromptSource, createShippedPromptSource } from './prompts.js';
import { createScraper, type Scraper } from './scrape.js';
import { createTransport, type Transport } from './transport.js';
import type { BenchResult, BenchRun, RequestSample } from './types.js';

// A higher level must add at least 5% output tok/s over the best lower one, or the server is saturated.
const SATURATION_MIN_GAIN = 0.05;
// /v1/models answers instantly on a live server; a slow answer must not hold up the benchmark.
const MODELS_TIMEOUT_MS = 5000;

/** The result of runBench: the per-level runs plus every measured request. */
export type BenchOutput = BenchResult & { samples: RequestSample[] };

// Run every level of a benchmark; failures of single requests are data, a server that never answers is an error.
export async function runBench(
  options: BenchOptions,
  onEvent: BenchEventSink = ignoreEvents,
  signal?: AbortSignal,
): Promise<BenchOutput> {
  const resolved = resolveBenchOptions(options);
  const transport = createTransport(new URL(resolved.url), resolved.transport);
  const o = { ...resolved, model: resolved.model ?? (await discoverModel(transport, resolved)) };
  const prompts = await createPromptSource(o);
  const nonce = createRunNonce();
  const ctx: LevelContext = {
    opts: o,
    transport,
    onEvent,
    signal,
    url: joinUrl(o.url, planRequest(o.api, null, { text: '' }, 'x', 1, null).path),
    nextId: createIdSource(),
    nextPrompt: (id) => applyPromptPolicy(o.cachePolicy, nonce, id, prompts()),
    extraFields: o.cachePolicy.requestFields,
    cacheReset: { available: o.cachePolicy.resetEndpoint !== undefined },
  };
  const scraper = o.scrapeEngine
    ? createScraper(transport, o.url, o.apiKey, o.engineEndpoints, o.timeouts.firstToken)
    : null;
  const result: BenchOutput = {
    url: redactText(o.url),
    api: o.api,
    model: o.model,
    transport: transport.name,
    cachePolicy: o.cachePolicy.description,
    runs: [],
    skipped: [],
    samples: [],
  };
  try {
    for (const c of o.concurrency) {
      if (signal?.aborted) break;
      const { run, samples } = await runMeasuredLevel(ctx, scraper, c, result.runs.length === 0);
      result.runs.push(run);
      result.samples.push(...samples);
      onEvent({ type: 'bench:level', ts: Date.now(), run });
      const saturated = shouldStopAtSaturation(o, result.runs, onEvent);
      const why = run.stoppedEarly !== null ? `concurrency ${c} stopped early: ${run.stoppedEarly}` : saturated;
      if (why) {
        result.skipped = o.concurrency.slice(result.runs.length).map((level) => ({ concurrency: level, reason: why }));
        break;
      }
    }
  } finally {
    transport.close();
  }
  if (signal?.aborted) throw new ToolError('E_BENCH_FAILED', 'benchmark aborted', { cause: signal.reason });
  return result;
}

// vLLM rejects requests for a model it does not serve: without --model, ask /v1/models for the first one.
async function discoverModel(t: Transport, o: ResolvedBenchOptions): Promise<string | null> {
  if (o.api === 'sglang') return null;
  const headers: Record<string, string> = o.apiKey ? { authorization: `Bearer ${o.apiKey}` } : {};
  const text = await t.getText(
    joinUrl(o.url, '/v1/models'),
    headers,
    Math.min(MODELS_TIMEOUT_MS, o.timeouts.firstToken),
  );
  try {
    const id = (JSON.parse(text ?? 'null') as { data?: { id?: unknown }[] } | null)?.data?.[0]?.id;
    return typeof id === 'string' && id ? id : null;
  } catch {
    return null;
  }
}

function createIdSource(): () => string {
  let n = 0;
  return () => `bench-${++n}`;
}

async function createPromptSource(o: ResolvedBenchOptions): Promise<() => BenchPrompt> {
  if (o.prompts && o.prompts.length > 0) return createListPromptSource(o.prompts);
  return createShippedPromptSource(await loadShippedCorpus(), o.inputTokens, o.seed);
}

// Warm up, scrape, measure, scrape; the first level also proves the server answers at all.
async function runMeasuredLevel(
  ctx: LevelContext,
  scraper: Scraper | null,
  c: number,
  first: boolean,
): Promise<{ run: BenchRun; samples: RequestSample[] }> {
  const o = ctx.opts;
  const warm = o.warmup ?? c;
  if (warm > 0) {
    const w = await runLevel(ctx, Math.min(c, warm), { requests: warm, durationMs: null }, false);
    if (first && !ctx.signal?.aborted) assertServerAnswers(w, o.url, o);
  }
  await resetCacheBeforeLevel(ctx, c);
  const before = scraper ? await scraper.scrape() : null;
  let during: Promise<EngineView | null> = Promise.resolve(null);
  const perLevel = o.requestsPerLevel?.[o.concurrency.indexOf(c)];
  const budget = {
    requests: o.durationSec !== null ? null : (perLevel ?? o.requests ?? defaultRequests(c)),
    durationMs: o.durationSec !== null ? o.durationSec * 1000 : null,
  };
  const level = await runLevel(
    {
      ...ctx,
      onHalfway: () => {
        if (scraper) during = scraper.scrape();
      },
    },
    c,
    budget,
    true,
  );
  if (first && warm === 0 && !ctx.signal?.aborted) assertServerAnswers(level, o.url, o);
  const after = scraper ? await scraper.scrape() : null;
  if (level.stats.usageMissing > 0) {
    ctx.onEvent({
      type: 'log',
      ts: Date.now(),
      level: 'warn',
      message: `concurrency ${c}: the server sent no usage for ${level.stats.usageMissing} requests; their token counts are SSE chunk counts (low under speculative decoding)`,
    });
  }
  warnSharedReads(ctx, c, level.stats);
  return { run: buildRun(c, o, level, { before, after, during: await during }), samples: level.samples };
}

// The engine's own cache reset (SGLang /flush_cache, vLLM /reset_prefix_cache) after the warm-up: the level starts
// cold as every other level and run does. A failed reset is a warning, not a failed benchmark.
// After one failure the run stops calling it (said once).
async function resetCacheBeforeLevel(ctx: LevelContext, c: number): Promise<void> {
  if (!ctx.cacheReset?.available) return;
  const out = await resetEngineCache(ctx.opts.url, ctx.opts.cachePolicy, ctx.opts.apiKey);
  if (out && !out.ok) {
    ctx.cacheReset.available = false;
    const path = ctx.opts.cachePolicy.resetEndpoint?.path ?? '';
    const rest = ctx.opts.cachePolicy.uniquePrefix
      ? 'unique prompt prefixes still keep cached prefixes out of the measurement'
      : 'levels may reuse cached prefixes';
    ctx.onEvent({
      type: 'log',
      ts: Date.now(),
      level: 'warn',
      message: `concurrency ${c}: the engine's cache reset ${path} failed (${out.error}); not calling it again in this run; ${rest}`,
    });
  }
}

// Above this share of token frames read together with the one before, ITL percentiles deserve a warning.
const SHARED_READS_WARN = 0.01;

// Frames read together carry one arrival time between them: say so when there are enough to move the tails.
function warnSharedReads(ctx: LevelContext, c: number, s: LevelStats): void {
  if (s.frames === 0 || s.sharedFrames / s.frames <= SHARED_READS_WARN) return;
  const pct = ((100 * s.sharedFrames) / s.frames).toFixed(1);
  const why =
    ctx.transport.name === 'native'
      ? 'the server sent them together, or this machine starved the reader thread'
      : 'the server sent them together, or the event loop read them late (the native reader is not in use)';
  ctx.onEvent({
    type: 'log',
    ts: Date.now(),
    level: 'warn',
    message: `concurrency ${c}: ${pct}% of token frames arrived in one read with the frame before them (${why}); their gaps count as 0 ms, mean ITL and tok/s are unaffected`,
  });
}

// A server that fails every request is not a benchmark result: say what is wrong with a hint.
function assertServerAnswers(l: LevelOutcome, url: string, o: Pick<ResolvedBenchOptions, 'authHint'>): void {
  const s = l.stats;
  if (s.ok > 0 || s.failed === 0) return;
  const detail = redactText(s.lastError ?? 'unknown error');
  const where = redactText(url);
  if (s.lastErrorPhase === 'connect') {
    throw new ToolError('E_BENCH_CONNECT', `cannot connect to ${where}: ${detail}`, {
      hint: 'is the server up? check --url',
    });
  }
  if (s.lastErrorPhase === 'httpStatus' && /^HTTP 40[13]\b/.test(s.lastError ?? '')) {
    throw new ToolError('E_BENCH_FAILED', `every request to ${where} failed: ${detail}`, { hint: o.authHint });
  }
  if (s.lastErrorPhase === 'httpStatus') {
    throw new ToolError('E_BENCH_FAILED', `every request to ${where} failed: ${detail}`, {
      hint: 'check --api, --model and --api-key',
    });
  }
  if (s.lastErrorPhase === 'firstTokenTimeout') {
    throw new ToolError('E_BENCH_FIRST_TOKEN_TIMEOUT', `no request to ${where} produced a token: ${detail}`, {
      hint: 'is the model loaded? raise the first-token timeout for slow prefill',
    });
  }
  throw new ToolError('E_BENCH_FAILED', `every request to ${where} failed: ${detail}`, {
    hint: 'check the server log',
  });
}

// Assemble the per-level figures the tuner, the store and the reports read.
function buildRun(c: number, o: ResolvedBenchOptions, l: LevelOutcome, engine: BenchRun['engine']): BenchRun {
  const s: LevelStats = l.stats;
  const ms = s.durationMs();
  const acc = computeAcceptance(engine.before, engine.after, engine.during ?? null, s.draft);
  return {
    concurrency: c,
    rate: o.rate,
    requests: { ok: s.ok, failed: s.failed },
    durationMs: round(ms, 1) ?? 0,
    outputTokensPerSec: ms > 0 ? (round((s.outputTokens * 1000) / ms, 2) ?? 0) : 0,
    requestsPerSec: ms > 0 ? (round((s.ok * 1000) / ms, 3) ?? 0) : 0,
    ttftMs: summarizeHistogram(s.ttft),
    itlMs: summarizeHistogram(s.itl),
    e2eMs: summarizeHistogram(s.e2e),
    decodeTokensPerSec: summarizeHistogram(s.decode, 2),
    acceptLength: round(acc.acceptLength, 3),
    acceptRate: round(acc.acceptRate, 4),
    acceptSource: acc.source,
    usageFromServer: s.ok > 0 && s.usageMissing === 0,
    sharedReadFrames: s.sharedFrames,
    errors: { ...s.errors },
    engine,
    stoppedEarly: l.stoppedEarly,
  };
}

// Closed loop only: a level that adds under SATURATION_MIN_GAIN over the best lower level ends the sweep; returns
// the reason (null: go on).
function shouldStopAtSaturation(o: ResolvedBenchOptions, runs: BenchRun[], onEvent: BenchEventSink): string | null {
  if (!o.stopAtSaturation || o.rate !== null || runs.length < 2) return null;
  const last = runs[runs.length - 1];
  const remaining = o.concurrency.slice(runs.length);
  if (remaining.length === 0) return null;
  const best = runs.slice(0, -1).reduce((a, b) => (b.outputTokensPerSec > a.outputTokensPerSec ? b : a));
  if (last.outputTokensPerSec >= best.outputTokensPerSec * (1 + SATURATION_MIN_GAIN)) return null;
  const gain =
    best.outputTokensPerSec > 0
      ? Math.round((100 * (last.outputTokensPerSec - best.outputTokensPerSec)) / best.outputTokensPerSec)
      : 0;
  const reason = `server saturated: concurrency ${last.concurrency} gave ${last.outputTokensPerSec} output tok/s, ${gain}% vs ${best.outputTokensPerSec} at concurrency ${best.concurrency}; skipping ${remaining.join(',')}`;
  onEvent({ type: 'bench:stopped', ts: Date.now(), concurrency: last.concurrency, reason });
  return reason;
}
