// Settings an engine takes from its environment: llama-server reads LLAMA_ARG_<FLAG> for most flags
// (common/arg.cpp set_env), e.g. LLAMA_ARG_CTX_SIZE for --ctx-size. Command-line flags override them.
import { coerceValue } from './flags.js';
import { LLAMACPP_PARAMS } from './llamacpp/index.js';
import type { EngineName, EngineSettings } from './types.js';

// The LLAMA_ARG_ variable of a llama-server flag.
function llamaEnvName(flag: string): string {
  return 'LLAMA_ARG_' + flag.replace(/^--/, '').replace(/-/g, '_').toUpperCase();
}

// Read the settings an engine would take from env (only llama.cpp has such a convention).
export function readEnvSettings(engine: EngineName, env: Record<string, string>): EngineSettings {
  if (engine !== 'llamacpp') return {};
  const out: EngineSettings = {};
  for (const spec of LLAMACPP_PARAMS) {
    const name = [spec.flag, ...(spec.aliases ?? [])].filter((f) => f.startsWith('--')).map(llamaEnvName).find((n) => env[n] !== undefined);
    if (name) out[spec.key] = coerceValue(spec, env[name]);
  }
  return out;
}
