// Test-side extraction of the engine command from the 30 reference launch configurations: systemd units and
// shell scripts go through the product's text readers; compose/k8s YAML is turned into argv with `yaml`.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { splitShellCommands } from '../../src/engines/shell-words.js';
import type { EngineName } from '../../src/engines/types.js';

/** One line of launch-configs.jsonl. */
export interface LaunchConfig {
  id: string;
  kind: 'systemd' | 'compose' | 'k8s' | 'shell';
  engine: EngineName;
  format: string;
  text: string;
  spec_state: string;
  spec_flags_mentioned: string[];
  companion?: { text: string; path: string };
}

export const LAUNCH_CONFIGS_PATH = fileURLToPath(
  new URL('../fixtures/launch-configs/launch-configs.jsonl', import.meta.url),
);

// Read the reference file (skips the suite when it is not on this machine).
export function loadLaunchConfigs(): LaunchConfig[] {
  return readFileSync(LAUNCH_CONFIGS_PATH, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as LaunchConfig);
}

// Compose splits a string command shell-style (no expansion); folded scalars arrive as one line.
function composeWords(value: unknown): string[] {
  if (Array.isArray(value)) return value.map(String);
  if (typeof value !== 'string') return [];
  return splitShellCommands(value)
    .flat()
    .map((w) => w.value);
}

// The engine argv of a compose service: entrypoint + command (an image entrypoint is given by the caller).
export function composeArgv(
  text: string,
  imageEntrypoint: string[],
): { argv: string[]; environment: Record<string, string> } {
  const doc = parseAllDocuments(text)[0].toJS() as { services: Record<string, Record<string, unknown>> };
  const service = Object.values(doc.services)[0];
  const entry = service.entrypoint !== undefined ? composeWords(service.entrypoint) : imageEntrypoint;
  const environment: Record<string, string> = {};
  const env = service.environment;
  if (Array.isArray(env)) for (const e of env as string[]) environment[e.split('=')[0]] = e.slice(e.indexOf('=') + 1);
  else if (env && typeof env === 'object') Object.assign(environment, env);
  return { argv: [...entry, ...composeWords(service.command)], environment };
}

// The argv of every container of every Deployment in a k8s manifest.
export function k8sContainers(text: string): { name: string; argv: string[] }[] {
  const out: { name: string; argv: string[] }[] = [];
  for (const doc of parseAllDocuments(text)) {
    const js = doc.toJS() as {
      kind?: string;
      spec?: { template?: { spec?: { containers?: Record<string, unknown>[] } } };
    } | null;
    for (const c of js?.spec?.template?.spec?.containers ?? []) {
      out.push({
        name: String(c.name),
        argv: [...((c.command as string[]) ?? []), ...((c.args as string[]) ?? [])].map(String),
      });
    }
  }
  return out;
}

// The values a kustomize JSON6902 patch appends to a container's args.
export function kustomizeAppendedArgs(text: string): string[] {
  const ops = parseAllDocuments(text)[0].toJS() as { op: string; path: string; value: string }[];
  return ops.filter((o) => o.op === 'add' && o.path.endsWith('/args/-')).map((o) => o.value);
}

// Shell commands inside markdown code fences.
export function markdownCodeBlocks(text: string): string[] {
  return [...text.matchAll(/```[a-z]*\n([\s\S]*?)```/g)].map((m) => m[1]);
}
