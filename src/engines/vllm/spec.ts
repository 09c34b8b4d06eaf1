// vLLM's speculative decoding settings live in one JSON argument (--speculative-config '{...}'), in dotted
// sub-flags (--speculative-config.method mtp) or, in old releases, in separate flags. Read and patch whichever
// form the operator used, editing inside the JSON text so its formatting and other keys stay as written.
import { coerceValue, isIndirect } from '../flags.js';
import type { ArgvProblem, EngineSettings, ParamSpec, ParamValue } from '../types.js';

/** The speculative settings, keyed canonically, with their name inside the JSON. */
export const VLLM_SPEC_PARAMS: (ParamSpec & { jsonKey: string })[] = [
  {
    key: 'speculative_method',
    jsonKey: 'method',
    flag: '--speculative-config',
    type: 'string',
    description: 'speculative method (mtp, eagle, eagle3, ngram, medusa, draft_model, ...) inside --speculative-config',
  },
  {
    key: 'num_speculative_tokens',
    jsonKey: 'num_speculative_tokens',
    flag: '--speculative-config',
    type: 'int',
    min: 1,
    max: 64,
    description: 'draft tokens per step inside --speculative-config',
  },
  {
    key: 'speculative_model',
    jsonKey: 'model',
    flag: '--speculative-config',
    type: 'string',
    description: 'draft model inside --speculative-config',
  },
];

// Legacy flags that vLLM removed in favour of --speculative-config.
const LEGACY: Record<string, string> = {
  '--num-speculative-tokens': 'num_speculative_tokens',
  '--speculative-model': 'speculative_model',
};
const CONFIG_FLAG = '--speculative-config';

/** Where the speculative settings are written in an argv. */
interface SpecForms {
  /** Index of the token holding the JSON, and whether it is "--speculative-config=JSON". */
  json: { index: number; inline: boolean } | null;
  /** Dotted sub-flags: canonical key -> index of the flag token (value at index + 1 unless inline). */
  dotted: Map<string, { index: number; inline: boolean }>;
  legacy: Map<string, { index: number; inline: boolean; flag: string }>;
}

// Spell a flag with dashes (vLLM accepts --num_speculative_tokens for --num-speculative-tokens).
function dashed(flag: string): string {
  return flag.startsWith('--') ? '--' + flag.slice(2).replace(/_/g, '-') : flag;
}

// Find every form of speculative setting in argv (later occurrences win, as in argparse).
function findSpecForms(argv: readonly string[], from: number): SpecForms {
  const forms: SpecForms = { json: null, dotted: new Map(), legacy: new Map() };
  for (let i = from; i < argv.length; i++) {
    const [head, ...rest] = argv[i].split('=');
    const inline = rest.length > 0;
    const name = head.startsWith('--speculative')
      ? head
          .replace(/_/g, '-')
          .replace(/^--speculative-config\.(.*)$/, (_m, k: string) => `${CONFIG_FLAG}.${k.replace(/-/g, '_')}`)
      : dashed(head);
    if (name === CONFIG_FLAG) forms.json = { index: i, inline };
    else if (name.startsWith(`${CONFIG_FLAG}.`)) {
      const spec = VLLM_SPEC_PARAMS.find((p) => p.jsonKey === name.slice(CONFIG_FLAG.length + 1));
      if (spec) forms.dotted.set(spec.key, { index: i, inline });
    } else if (LEGACY[name]) forms.legacy.set(LEGACY[name], { index: i, inline, flag: head });
    else continue;
    if (!inline) i++;
  }
  return forms;
}

// The value of a flag occurrence.
function valueAt(argv: readonly string[], at: { index: number; inline: boolean }): string | null {
  return at.inline ? argv[at.index].slice(argv[at.index].indexOf('=') + 1) : (argv[at.index + 1] ?? null);
}

// Regex for one key's value in JSON-ish text (also matches values that are ${VAR} interpolations).
function jsonValuePattern(jsonKey: string): RegExp {
  return new RegExp(`("${jsonKey}"\\s*:\\s*)("(?:[^"\\\\]|\\\\.)*"|\\$\\{[^}]*\\}|[^,}\\s]+)`);
}

// Read one key from the JSON text, leniently (the text may hold ${VAR:-default} and not parse as JSON).
function readJsonKey(text: string, spec: ParamSpec & { jsonKey: string }): ParamValue | undefined {
  const m = jsonValuePattern(spec.jsonKey).exec(text);
  if (!m) return undefined;
  const raw = m[2].startsWith('"') ? (JSON.parse(m[2]) as string) : m[2];
  return coerceValue(spec, raw);
}

// Read the speculative settings in force from whichever form is used.
export function readVllmSpec(argv: readonly string[], from: number): EngineSettings {
  const forms = findSpecForms(argv, from);
  const out: EngineSettings = {};
  const json = forms.json ? valueAt(argv, forms.json) : null;
  for (const spec of VLLM_SPEC_PARAMS) {
    const legacy = forms.legacy.get(spec.key);
    const dotted = forms.dotted.get(spec.key);
    const v = dotted
      ? coerceValue(spec, valueAt(argv, dotted))
      : json !== null
        ? readJsonKey(json, spec)
        : legacy
          ? coerceValue(spec, valueAt(argv, legacy))
          : undefined;
    if (v !== undefined) out[spec.key] = v;
  }
  return out;
}

// Set, add or remove one key inside the JSON text, keeping its other bytes.
export function editJsonText(text: string, jsonKey: string, value: ParamValue | null): string {
  const literal = value === null ? '' : typeof value === 'string' ? JSON.stringify(value) : String(value);
  const re = jsonValuePattern(jsonKey);
  if (re.test(text)) {
    if (value !== null) return text.replace(re, (_m, head: string) => head + literal);
    const entry = new RegExp(`\\s*"${jsonKey}"\\s*:\\s*(?:"(?:[^"\\\\]|\\\\.)*"|\\$\\{[^}]*\\}|[^,}\\s]+)\\s*,?`);
    return text.replace(entry, '').replace(/,(\s*)\}\s*$/, '$1}');
  }
  if (value === null) return text;
  const close = text.lastIndexOf('}');
  const empty = /^\s*\{\s*$/.test(text.slice(0, close));
  const sep = /:\s/.test(text) ? ': ' : ':';
  return `${text.slice(0, close)}${empty ? '' : ', '}"${jsonKey}"${sep}${literal}${text.slice(close)}`;
}

// Write a value into a flag occurrence (inline or separate).
function writeAt(out: string[], at: { index: number; inline: boolean }, value: string): void {
  if (at.inline) out[at.index] = `${out[at.index].slice(0, out[at.index].indexOf('='))}=${value}`;
  else out[at.index + 1] = value;
}

// Patch the speculative keys in the operator's form: JSON, dotted or legacy; add JSON when none is present.
export function patchVllmSpec(
  argv: readonly string[],
  changes: Record<string, ParamValue | null>,
  from: number,
): string[] {
  const out = [...argv];
  const forms = findSpecForms(out, from);
  const fresh: Record<string, ParamValue> = {};
  for (const spec of VLLM_SPEC_PARAMS) {
    if (!(spec.key in changes)) continue;
    const value = changes[spec.key];
    const dotted = forms.dotted.get(spec.key),
      legacy = forms.legacy.get(spec.key);
    if (dotted) {
      if (value === null) out.splice(dotted.index, dotted.inline ? 1 : 2, ...[]);
      else writeAt(out, dotted, String(value));
    } else if (forms.json)
      writeAt(out, forms.json, editJsonText(valueAt(out, forms.json) ?? '{}', spec.jsonKey, value));
    else if (forms.dotted.size > 0 && value !== null) out.push(`${CONFIG_FLAG}.${spec.jsonKey}`, String(value));
    else if (legacy) {
      if (value === null) out.splice(legacy.index, legacy.inline ? 1 : 2);
      else writeAt(out, legacy, String(value));
    } else if (value !== null) fresh[spec.jsonKey] = value;
  }
  if (Object.keys(fresh).length > 0) out.push(CONFIG_FLAG, JSON.stringify(fresh));
  return out;
}

// Removed legacy flags, and a --speculative-config that will not parse once interpolated.
export function validateVllmSpec(argv: readonly string[], from: number): ArgvProblem[] {
  const forms = findSpecForms(argv, from);
  const problems: ArgvProblem[] = [];
  for (const [, at] of forms.legacy) {
    problems.push({
      severity: 'error',
      flag: at.flag,
      replacement: CONFIG_FLAG,
      message: `${at.flag} was removed from vLLM: use --speculative-config '{"method": ..., "num_speculative_tokens": N}'`,
    });
  }
  const json = forms.json ? valueAt(argv, forms.json) : null;
  if (json !== null && !isIndirect(json)) {
    try {
      JSON.parse(json);
    } catch {
      problems.push({
        severity: 'error',
        flag: CONFIG_FLAG,
        message: `--speculative-config is not valid JSON: ${json}`,
      });
    }
  }
  return problems;
}
