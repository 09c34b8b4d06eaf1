// Public face of the benchmark: what the CLI, the tuner and the reports import.
export { runBench, type BenchOutput } from './run.js';
export { DEFAULT_TIMEOUTS, DEFAULT_LENGTHS, type BenchOptions, type BenchTimeouts } from './options.js';
export { UNIQUE_PREFIX_POLICY, KEEP_CACHE_POLICY, type CachePolicy } from './cache.js';
export type { BenchApi, BenchPrompt } from './api.js';
export {
  parsePrometheus,
  summarizeEngineView,
  computeAcceptLength,
  type PromSample,
  type EngineView,
} from './prometheus.js';
export { parsePromptFile } from './prompts.js';
export { loadPromptFile } from './prompt-files.js';
export { LogHistogram } from './histogram.js';
export { SseScanner } from './sse.js';
export type { BenchResult, BenchRun, RequestSample, Summary, BenchErrors } from './types.js';
export { readerTotals, type ReaderStats } from './native-transport.js';
