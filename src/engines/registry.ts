// The engine registry, keyed by name: the --engine choices and the config enum derive from its keys.
import { ToolError } from '../errors.js';
import { llamacpp } from './llamacpp/index.js';
import { sglang } from './sglang/index.js';
import { vllm } from './vllm/index.js';
import type { EngineAdapter, EngineName } from './types.js';

const ENGINES: Record<EngineName, EngineAdapter> = { sglang, vllm, llamacpp };

/** Names of the engines spectune supports, in display order. */
export const ENGINE_NAMES = Object.keys(ENGINES) as EngineName[];

/** The port each engine listens on when its command line names none (each adapter's defaultPort). */
export const DEFAULT_PORTS = Object.fromEntries(ENGINE_NAMES.map((n) => [n, ENGINES[n].defaultPort])) as Record<
  EngineName,
  number
>;

/** Where an engine's own view is read: its Prometheus metrics path and its info JSON paths. */
export type EngineEndpoints = Pick<EngineAdapter, 'metricsPath' | 'infoPaths'>;

/** For an engine not named (`spectune bench --url` alone): the metrics path of the first engine (they all use
 *  /metrics) and every engine's info paths, in registry order, each asked until one answers. */
export const ANY_ENGINE_ENDPOINTS: EngineEndpoints = {
  metricsPath: ENGINES[ENGINE_NAMES[0]].metricsPath,
  infoPaths: [...new Set(ENGINE_NAMES.flatMap((n) => ENGINES[n].infoPaths))],
};

// Look an adapter up by name, failing with the list of known engines.
export function getEngine(name: string): EngineAdapter {
  const adapter = (ENGINES as Record<string, EngineAdapter | undefined>)[name];
  if (!adapter) {
    throw new ToolError('E_USAGE', `unknown engine "${name}"`, { hint: `known engines: ${ENGINE_NAMES.join(', ')}` });
  }
  return adapter;
}

// The endpoints of one engine's own view, as plain data (bench options are stored and printed).
export function getEngineEndpoints(name: string): EngineEndpoints {
  const { metricsPath, infoPaths } = getEngine(name);
  return { metricsPath, infoPaths };
}
