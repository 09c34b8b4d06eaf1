// Use case behind `spectune bench`: read the user's prompt file if any, then run the shared library benchmark.
import type { EventSink } from '../tune/events.js';
import {
  KEEP_CACHE_POLICY,
  loadPromptFile,
  runBench,
  UNIQUE_PREFIX_POLICY,
  type BenchOptions,
  type BenchOutput,
  type CachePolicy,
} from '../bench/index.js';
import { getEngine, getEngineEndpoints } from '../engines/index.js';

/** CLI-level input: the library options plus a prompt file path and the engine whose cache policy applies. */
export interface BenchRequest extends Omit<BenchOptions, 'prompts'> {
  promptsFile?: string | null;
  /** sglang | vllm | llamacpp (its adapter's cache policy), none (keep the cache), or null (unique prefixes). */
  cacheEngine?: string | null;
}

// The cache policy the CLI asked for: an engine's own, none, or the engine-neutral unique prefix.
export function selectCachePolicy(engine: string | null | undefined): CachePolicy {
  if (engine === undefined || engine === null) return UNIQUE_PREFIX_POLICY;
  if (engine === 'none') return KEEP_CACHE_POLICY;
  return getEngine(engine).cachePolicy;
}

// Benchmark an endpoint as the CLI does (the tuner calls runBench directly with the same options).
export async function benchEndpoint(req: BenchRequest, onEvent: EventSink, signal?: AbortSignal): Promise<BenchOutput> {
  const { promptsFile, cacheEngine, ...opts } = req;
  const cachePolicy = opts.cachePolicy ?? selectCachePolicy(cacheEngine);
  // A named engine is scraped at its own endpoints only; otherwise at every engine's.
  const engineEndpoints =
    opts.engineEndpoints ?? (cacheEngine && cacheEngine !== 'none' ? getEngineEndpoints(cacheEngine) : undefined);
  const prompts = promptsFile ? await loadPromptFile(promptsFile) : null;
  return runBench({ ...opts, prompts, cachePolicy, engineEndpoints }, onEvent, signal);
}
