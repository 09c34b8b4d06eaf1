// Binds the runner's benchmark port to runBench with the config's benchmark profile.
import { runBench, type BenchOptions } from '../bench/index.js';
import type { SpectuneConfig } from '../config/index.js';
import { getEngine, getEngineEndpoints } from '../engines/index.js';
import type { TuneBenchPort } from './tune-ports.js';

/** Warm-up requests are short: they touch every code path once (CUDA graphs, allocator); with the cache policy's
 *  unique prefixes or cache reset they leave nothing in the prefix cache that the measured requests could reuse. */
const WARMUP_OUTPUT_TOKENS = 16;

// Base options of every benchmark of the campaign.
export function benchOptionsFromConfig(cfg: SpectuneConfig, apiKey: string | null, authHint?: string): BenchOptions {
  const b = cfg.benchmark;
  return {
    url: cfg.target.endpoint,
    apiKey,
    ...(authHint ? { authHint } : {}),
    concurrency: b.concurrency,
    requests: b.requests,
    requestsPerLevel: b.requestsPerLevel,
    inputTokens: b.inputTokens,
    outputTokens: b.outputTokens,
    warmup: b.warmup,
    seed: cfg.search.seed,
    timeouts: { connect: b.timeouts.connectMs, firstToken: b.timeouts.firstTokenMs, stall: b.timeouts.stallMs },
    // Every measurement starts from the same cache state, by the engine's own means (its adapter's data).
    cachePolicy: getEngine(cfg.target.engine).cachePolicy,
    engineEndpoints: getEngineEndpoints(cfg.target.engine),
  };
}

// Options for one phase: warm-up is one short request per level; a soak repeats the profile (or runs for its duration).
export function benchOptionsForPhase(
  base: BenchOptions,
  cfg: SpectuneConfig,
  phase: 'warmup' | 'bench' | 'soak',
): BenchOptions {
  if (phase === 'warmup')
    return {
      ...base,
      concurrency: [1],
      requests: Math.max(1, cfg.benchmark.warmup),
      requestsPerLevel: null,
      warmup: 0,
      outputTokens: WARMUP_OUTPUT_TOKENS,
      scrapeEngine: false,
    };
  if (phase === 'bench') return base;
  const soak = cfg.search.soak;
  if (soak.durationMs) return { ...base, requests: null, requestsPerLevel: null, durationSec: soak.durationMs / 1000 };
  const times = Math.max(1, soak.repeats);
  return {
    ...base,
    requests: (base.requests ?? cfg.benchmark.requests) * times,
    requestsPerLevel: base.requestsPerLevel?.map((n) => n * times) ?? null,
  };
}

// The benchmark port (timeouts by phase come from the config; Ctrl-C cancels through the signal).
export function createBenchPort(cfg: SpectuneConfig, apiKey: string | null, authHint?: string): TuneBenchPort {
  const base = benchOptionsFromConfig(cfg, apiKey, authHint);
  return {
    async run(phase, onEvent, signal) {
      const out = await runBench(
        benchOptionsForPhase(base, cfg, phase),
        phase === 'warmup' ? () => {} : onEvent,
        signal,
      );
      return { runs: out.runs, samples: out.samples };
    },
  };
}
