// Binds the runner's benchmark port to runBench with the config's benchmark profile.
import { runBench, type BenchOptions } from '../bench/index.js';
import type { SpectuneConfig } from '../config/index.js';
import type { TuneBenchPort } from './tune-ports.js';

/** Warm-up requests are short: they only need to touch every code path once (CUDA graphs, prefix cache). */
const WARMUP_OUTPUT_TOKENS = 16;

// Base options of every benchmark of the campaign.
export function benchOptionsFromConfig(cfg: SpectuneConfig, apiKey: string | null): BenchOptions {
  const b = cfg.benchmark;
  return {
    url: cfg.target.endpoint, apiKey, concurrency: b.concurrency, requests: b.requests, inputTokens: b.inputTokens,
    outputTokens: b.outputTokens, warmup: b.warmup, seed: cfg.search.seed,
    timeouts: { connect: b.timeouts.connectMs, firstToken: b.timeouts.firstTokenMs, stall: b.timeouts.stallMs },
  };
}

// Options for one phase: warm-up is one short request per level; a soak repeats the profile (or runs for its duration).
export function benchOptionsForPhase(base: BenchOptions, cfg: SpectuneConfig, phase: 'warmup' | 'bench' | 'soak'): BenchOptions {
  if (phase === 'warmup') return { ...base, concurrency: [1], requests: Math.max(1, cfg.benchmark.warmup), warmup: 0, outputTokens: WARMUP_OUTPUT_TOKENS, scrapeEngine: false };
  if (phase === 'bench') return base;
  const soak = cfg.search.soak;
  if (soak.durationMs) return { ...base, requests: null, durationSec: soak.durationMs / 1000 };
  return { ...base, requests: (base.requests ?? cfg.benchmark.requests) * Math.max(1, soak.repeats) };
}

// The benchmark port (timeouts by phase come from the config; Ctrl-C cancels through the signal).
export function createBenchPort(cfg: SpectuneConfig, apiKey: string | null): TuneBenchPort {
  const base = benchOptionsFromConfig(cfg, apiKey);
  return {
    async run(phase, onEvent, signal) {
      const out = await runBench(benchOptionsForPhase(base, cfg, phase), phase === 'warmup' ? () => {} : onEvent, signal);
      return { runs: out.runs, samples: out.samples };
    },
  };
}
