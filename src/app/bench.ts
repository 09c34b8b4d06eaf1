// Use case behind `spectune bench`: read the user's prompt file if any, then run the shared library benchmark.
import type { EventSink } from '../events.js';
import { loadPromptFile, runBench, type BenchOptions, type BenchOutput } from '../bench/index.js';

/** CLI-level input: the library options plus a prompt file path. */
export interface BenchRequest extends Omit<BenchOptions, 'prompts'> {
  promptsFile?: string | null;
}

// Benchmark an endpoint as the CLI does (the tuner calls runBench directly with the same options).
export async function benchEndpoint(req: BenchRequest, onEvent: EventSink, signal?: AbortSignal): Promise<BenchOutput> {
  const { promptsFile, ...opts } = req;
  const prompts = promptsFile ? await loadPromptFile(promptsFile) : null;
  return runBench({ ...opts, prompts }, onEvent, signal);
}
