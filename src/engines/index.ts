// The engines module: adapters (data + pure functions), the registry, and ExecStart reading/patching.
export {
  ENGINE_NAMES,
  DEFAULT_PORTS,
  ANY_ENGINE_ENDPOINTS,
  getEngine,
  getEngineEndpoints,
  type EngineEndpoints,
} from './registry.js';
export { parsePrometheus, sumMetric, meanMetric, type PromSample } from './prometheus.js';
export {
  readExecStart,
  patchExecStart,
  readShellCommand,
  patchShellCommand,
  resolveReferences,
} from './command-line.js';
export { readEnvSettings } from './env-settings.js';
export type { ExecStartReading, ExecStartPatch, Indirection } from './command-line.js';
export { findEngineCommand, detectEngine, type EngineLocation } from './locate.js';
export { splitExecWords, quoteSystemdWord, locateExecStart, readUnitEnvironment } from './systemd-words.js';
export { splitShellCommands, quoteShellWord } from './shell-words.js';
export { sglang, SGLANG_PARAMS } from './sglang/index.js';
export type * from './types.js';
export { llamacpp, LLAMACPP_PARAMS, parseTimingLines } from './llamacpp/index.js';
export { vllm, VLLM_PARAMS } from './vllm/index.js';
