// Generic argv flag grammar shared by the adapters: find a parameter's flag in any spelling (--flag value,
// --flag=value, aliases), read it as a typed value, and set or remove it without touching other tokens.
import { ToolError } from '../errors.js';
import { matchInvocation } from './invocation.js';
import type { ArgvProblem, EngineInvocation, EngineSettings, ParamSpec, ParamValue } from './types.js';

/** One occurrence of a flag in an argv. */
export interface FlagHit {
  spec: ParamSpec;
  /** Index of the flag token. */
  index: number;
  /** The flag as the operator spelled it (before any "="). */
  spelled: string;
  /** The value was written as --flag=value. */
  inline: boolean;
  /** The raw value (null for a boolean flag or a flag at the end of argv). */
  value: string | null;
}

/** How an engine's argument parser treats flag spellings. */
export interface FlagGrammar {
  /** Python engines accept --max_model_len for --max-model-len (vLLM) — compare with underscores as dashes. */
  underscoresAsDashes: boolean;
}

// Spell a flag the way the grammar compares it.
function normalizeFlag(flag: string, grammar: FlagGrammar): string {
  return grammar.underscoresAsDashes && flag.startsWith('--') ? '--' + flag.slice(2).replace(/_/g, '-') : flag;
}

// Build a lookup from every accepted spelling of every parameter to its spec.
export function indexFlags(params: ParamSpec[], grammar: FlagGrammar): Map<string, ParamSpec> {
  const index = new Map<string, ParamSpec>();
  for (const p of params) {
    for (const f of [p.flag, ...(p.aliases ?? [])]) index.set(normalizeFlag(f, grammar), p);
  }
  return index;
}

// List every occurrence of a known flag in argv (tokens from `from` on), in order.
export function findFlagHits(
  argv: readonly string[],
  index: Map<string, ParamSpec>,
  grammar: FlagGrammar,
  from = 0,
): FlagHit[] {
  const hits: FlagHit[] = [];
  for (let i = from; i < argv.length; i++) {
    const tok = argv[i];
    if (!tok.startsWith('-')) continue;
    const eq = tok.indexOf('=');
    const spelled = eq > 0 && tok.startsWith('--') ? tok.slice(0, eq) : tok;
    const spec = index.get(normalizeFlag(spelled, grammar));
    if (!spec) continue;
    if (spelled !== tok) hits.push({ spec, index: i, spelled, inline: true, value: tok.slice(eq + 1) });
    else if (spec.type === 'bool') hits.push({ spec, index: i, spelled, inline: false, value: null });
    else {
      hits.push({ spec, index: i, spelled, inline: false, value: argv[i + 1] ?? null });
      i++;
    }
  }
  return hits;
}

// The value references an environment variable (systemd/shell/compose/k8s), so its literal is not the value.
export function isIndirect(value: string): boolean {
  return /\$\{?[A-Za-z_]|\$\(/.test(value);
}

// Convert a raw flag value to the parameter's type; indirect or unparsable values stay strings.
export function coerceValue(spec: ParamSpec, raw: string | null): ParamValue {
  if (raw === null) return spec.type === 'bool' ? true : '';
  if (isIndirect(raw)) return raw;
  if (spec.type === 'int' && /^-?\d+$/.test(raw)) return Number(raw);
  if (spec.type === 'float' && /^-?(\d+\.?\d*|\.\d+)(e-?\d+)?$/i.test(raw)) return Number(raw);
  if (spec.type === 'bool') return !/^(false|0|no|off)$/i.test(raw);
  return raw;
}

// Read the settings in force: the last occurrence of a flag wins, as in argparse and llama.cpp's parser.
export function readFlagSettings(
  argv: readonly string[],
  params: ParamSpec[],
  grammar: FlagGrammar,
  from = 0,
): EngineSettings {
  const settings: EngineSettings = {};
  for (const hit of findFlagHits(argv, indexFlags(params, grammar), grammar, from)) {
    settings[hit.spec.key] = coerceValue(hit.spec, hit.value);
  }
  return settings;
}

// Report values that do not fit their parameter (wrong type, out of range, unknown choice).
export function checkFlagValues(
  argv: readonly string[],
  params: ParamSpec[],
  grammar: FlagGrammar,
  from = 0,
): ArgvProblem[] {
  const problems: ArgvProblem[] = [];
  for (const hit of findFlagHits(argv, indexFlags(params, grammar), grammar, from)) {
    if (hit.value !== null && isIndirect(hit.value)) continue;
    const why = describeBadValue(hit.spec, coerceValue(hit.spec, hit.value));
    if (why)
      problems.push({
        severity: 'warning',
        flag: hit.spelled,
        message: `${hit.spelled} ${JSON.stringify(hit.value)}: ${why}`,
      });
  }
  return problems;
}

// Say why a value does not fit a parameter, or return null when it does.
export function describeBadValue(spec: ParamSpec, value: ParamValue): string | null {
  if (spec.type === 'int' && !(typeof value === 'number' && Number.isInteger(value))) return 'expected an integer';
  if (spec.type === 'float' && typeof value !== 'number') return 'expected a number';
  if (typeof value === 'number') {
    if (spec.min !== undefined && value < spec.min) return `below the minimum ${spec.min}`;
    if (spec.max !== undefined && value > spec.max) return `above the maximum ${spec.max}`;
  }
  if (spec.type === 'enum' && spec.values && !spec.values.includes(String(value))) {
    return `expected one of ${spec.values.join(', ')}`;
  }
  return null;
}

// Look a canonical key up, failing with the list of known keys.
export function requireParam(params: ParamSpec[], key: string, engine: string): ParamSpec {
  const spec = params.find((p) => p.key === key);
  if (!spec) {
    throw new ToolError('E_ENGINE_FLAG', `${engine} has no tunable setting "${key}"`, {
      hint: `known settings: ${params.map((p) => p.key).join(', ')}`,
    });
  }
  return spec;
}

// Refuse a value the engine would reject, before it reaches a unit file.
export function assertValidValue(spec: ParamSpec, value: ParamValue, engine: string): void {
  const why = describeBadValue(spec, value);
  if (why) {
    throw new ToolError('E_ENGINE_FLAG', `${engine} ${spec.key}=${JSON.stringify(value)}: ${why}`, {
      hint:
        spec.min !== undefined || spec.max !== undefined
          ? `valid range: ${spec.min ?? '-inf'}..${spec.max ?? 'inf'}`
          : spec.description,
    });
  }
}

// Render a typed value as the flag's argument text.
export function formatValue(value: ParamValue): string {
  return typeof value === 'boolean' ? String(value) : String(value);
}

// Set, add or remove one parameter in argv; every other token stays where and as it was.
export function setFlag(
  argv: readonly string[],
  spec: ParamSpec,
  value: ParamValue | null,
  grammar: FlagGrammar,
  from = 0,
): string[] {
  const hits = findFlagHits(argv, indexFlags([spec], grammar), grammar, from);
  const out = [...argv];
  const remove = value === null || (spec.type === 'bool' && value === false);
  if (remove) {
    for (const hit of [...hits].reverse()) out.splice(hit.index, hit.inline || hit.value === null ? 1 : 2);
    return out;
  }
  if (hits.length === 0) {
    out.push(...(spec.type === 'bool' ? [spec.flag] : [spec.flag, formatValue(value)]));
    return out;
  }
  for (const hit of hits) {
    if (spec.type === 'bool' && !hit.inline) continue;
    if (hit.inline) out[hit.index] = `${hit.spelled}=${formatValue(value)}`;
    else out[hit.index + 1] = formatValue(value);
  }
  return out;
}

// Index of the first engine flag in an engine argv: after the adapter's invocation words that start it, else after
// "python -m module", "x serve", "x sim", "node x.js sim" (a variable binary).
export function skipInvocation(argv: readonly string[], invocations: readonly EngineInvocation[] = []): number {
  for (const inv of invocations) {
    const n = matchInvocation(argv, 0, inv);
    if (n !== null) return Math.min(n, argv.length);
  }
  if (argv[1] === '-m' && /python[\d.]*$/.test(argv[0] ?? '')) return Math.min(3, argv.length);
  if (argv[1] === 'serve' || argv[1] === 'sim') return 2;
  if (argv[2] === 'sim') return 3;
  return Math.min(1, argv.length);
}
