// Settings an engine takes from its environment, for an engine whose adapter names a flagEnvPrefix: llama-server
// reads LLAMA_ARG_<FLAG> for most flags (common/arg.cpp set_env), e.g. LLAMA_ARG_CTX_SIZE for --ctx-size.
// Command-line flags override them.
import { coerceValue } from './flags.js';
import { getEngine } from './registry.js';
import type { EngineName, EngineSettings } from './types.js';

// The environment variable of a long flag under a prefix.
function flagEnvName(prefix: string, flag: string): string {
  return prefix + flag.replace(/^--/, '').replace(/-/g, '_').toUpperCase();
}

// Read the settings an engine would take from env (only engines with a flagEnvPrefix have such a convention).
export function readEnvSettings(engine: EngineName, env: Record<string, string>): EngineSettings {
  const { flagEnvPrefix: prefix, params } = getEngine(engine);
  if (!prefix) return {};
  const out: EngineSettings = {};
  for (const spec of params) {
    const name = [spec.flag, ...(spec.aliases ?? [])]
      .filter((f) => f.startsWith('--'))
      .map((f) => flagEnvName(prefix, f))
      .find((n) => env[n] !== undefined);
    if (name) out[spec.key] = coerceValue(spec, env[name]);
  }
  return out;
}
