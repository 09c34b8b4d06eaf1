// The engine registry, keyed by name: the --engine choices and the config enum derive from its keys.
import { ToolError } from '../errors.js';
import { findEngineCommand } from './locate.js';
import { llamacpp } from './llamacpp.js';
import { sglang } from './sglang.js';
import { vllm } from './vllm.js';
import type { EngineAdapter, EngineName } from './types.js';

const ENGINES: Record<EngineName, EngineAdapter> = { sglang, vllm, llamacpp };

/** Names of the engines spectune supports, in display order. */
export const ENGINE_NAMES = Object.keys(ENGINES) as EngineName[];

// Look an adapter up by name, failing with the list of known engines.
export function getEngine(name: string): EngineAdapter {
  const adapter = (ENGINES as Record<string, EngineAdapter | undefined>)[name];
  if (!adapter) {
    throw new ToolError('E_USAGE', `unknown engine "${name}"`, { hint: `known engines: ${ENGINE_NAMES.join(', ')}` });
  }
  return adapter;
}

// Tell which engine an argv starts (directly or inside a shell -c wrapper), or null.
export function detectEngine(argv: readonly string[]): EngineName | null {
  const loc = findEngineCommand(argv);
  return loc.kind === 'wrapper' ? null : loc.engine;
}
