// Read the engine settings in force from a unit's ExecStart, and patch engine flags into it for a drop-in,
// keeping every other byte of the operator's command as written.
import { ToolError } from '../errors.js';
import { getEngine } from './registry.js';
import { findEngineCommand, locateInScript, type EngineLocation } from './locate.js';
import { readEnvSettings } from './env-settings.js';
import { applyArgvEdits, type TokenSpan, type WordEncoder } from './patch-text.js';
import { quoteShellWord } from './shell-words.js';
import {
  escapeForSystemdQuote,
  locateExecStart,
  quoteSystemdWord,
  readEnvironmentFiles,
  readUnitEnvironment,
  splitExecWords,
  type RawWord,
} from './systemd-words.js';
import type { ArgvProblem, EngineName, EngineSettings, ParamValue } from './types.js';

/** A setting whose value comes from an environment variable, not from a literal in the command. */
export interface Indirection {
  key: string;
  /** The value as written, e.g. "${DRAFT_TOKENS}". */
  expression: string;
  /** Its value from Environment= or the caller's env, or null when only the host knows it. */
  resolved: ParamValue | null;
}

/** What is in force according to an ExecStart. */
export interface ExecStartReading {
  engine: EngineName | null;
  /** The engine's argv as written (variables and specifiers kept). */
  argv: string[];
  /** Settings with known variables resolved (unresolved ones keep their "${VAR}" text). */
  settings: EngineSettings;
  /** Settings after the engine's own derivation rules. */
  effective: EngineSettings;
  indirections: Indirection[];
  problems: ArgvProblem[];
  warnings: string[];
  location: EngineLocation | null;
}

/** The result of patching flags into an ExecStart. */
export interface ExecStartPatch {
  /** The new ExecStart value (what follows "ExecStart=" in a drop-in). */
  execStart: string;
  /** The directive it belongs to: "ExecStart", or "Exec" for a Podman Quadlet [Container]. */
  directive: string;
  changed: { key: string; from: ParamValue | null; to: ParamValue | null }[];
  warnings: string[];
}

interface ParsedCommand {
  raw: string;
  directive: string;
  words: RawWord[];
  unitText: string | null;
  warnings: string[];
}

// Accept a whole unit file, an "ExecStart=..." line, or a bare ExecStart value.
function parseCommand(text: string): ParsedCommand | null {
  const isUnit = /^[ \t]*\[[A-Za-z]+\][ \t]*$/m.test(text);
  if (isUnit) {
    const loc = locateExecStart(text);
    if (!loc) return null;
    return {
      raw: loc.value,
      directive: loc.directive,
      words: splitExecWords(loc.value).words,
      unitText: text,
      warnings: loc.warnings,
    };
  }
  const raw = text.replace(/^[ \t]*ExecStart[ \t]*=[ \t]*/, '').replace(/\s+$/, '');
  return { raw, directive: 'ExecStart', words: splitExecWords(raw).words, unitText: null, warnings: [] };
}

// Substitute ${VAR}, $VAR (and shell ${VAR:-default}) from env; unknown references stay as written.
export function resolveReferences(value: string, env: Record<string, string>): string {
  return value.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g,
    (m, braced, def, bare) => {
      const name = (braced ?? bare) as string;
      if (env[name] !== undefined) return env[name];
      return def !== undefined ? def : m;
    },
  );
}

// The engine's tokens with raw spans: systemd words directly, or shell words mapped through the script word.
function engineTokens(parsed: ParsedCommand, loc: EngineLocation): TokenSpan[] {
  if (loc.kind === 'direct')
    return parsed.words.slice(loc.start).map((w) => ({ value: w.value, start: w.start, end: w.end, quote: w.quote }));
  if (loc.kind !== 'shell') return [];
  const script = parsed.words[loc.scriptIndex];
  return loc.words.slice(loc.start).map((w) => ({
    value: w.value,
    start: script.map[w.start],
    end: script.mapEnd[w.end - 1],
    quote: null,
  }));
}

// How a new token is written: a systemd word, or a shell word inside the systemd-quoted script.
function encoderFor(parsed: ParsedCommand, loc: EngineLocation): WordEncoder {
  if (loc.kind !== 'shell') return (v, q) => quoteSystemdWord(v, q);
  const outer = parsed.words[loc.scriptIndex].quote;
  return (v) => {
    const shellWord = quoteShellWord(v);
    if (outer) return escapeForSystemdQuote(shellWord, outer);
    if (/[\s"'\\$%]/.test(shellWord)) {
      throw new ToolError('E_UNSAFE_VALUE', `cannot write ${JSON.stringify(v)} into an unquoted shell -c script`, {
        hint: "quote the -c script in the unit (ExecStart=/bin/bash -c '...') first",
      });
    }
    return shellWord;
  };
}

// Settings whose value is a variable reference, with what it resolves to.
function findIndirections(raw: EngineSettings, resolved: EngineSettings): Indirection[] {
  return Object.entries(raw)
    .filter(([, v]) => typeof v === 'string' && /\$\{?[A-Za-z_]|\$\(/.test(v))
    .map(([key, v]) => {
      const r = resolved[key];
      const known = r !== undefined && !(typeof r === 'string' && /\$\{?[A-Za-z_]|\$\(/.test(r));
      return { key, expression: String(v), resolved: known ? r : null };
    });
}

// Describe the indirections for the operator.
function indirectionWarnings(indirections: Indirection[], unitText: string | null): string[] {
  const files = unitText ? readEnvironmentFiles(unitText) : [];
  const where = files.length ? ` (EnvironmentFile=${files.join(', ')})` : '';
  return indirections.map((i) =>
    i.resolved === null
      ? `${i.key} comes from ${i.expression}${where}: its value is set outside this command`
      : `${i.key} comes from ${i.expression} = ${JSON.stringify(i.resolved)}`,
  );
}

/** A launch command prepared for reading or patching: the engine tokens with spans in `raw`. */
interface Prepared {
  raw: string;
  directive: string;
  tokens: TokenSpan[];
  encode: WordEncoder;
  engine: EngineName;
  location: EngineLocation;
  unitText: string | null;
  warnings: string[];
}

type Preparation = Prepared | { wrapper: string; location: EngineLocation | null; warnings: string[] };

// Prepare a unit / ExecStart value: find the engine tokens and how to encode new ones.
function prepareExecStart(text: string, hint?: EngineName): Preparation {
  const parsed = parseCommand(text);
  if (!parsed) return { wrapper: 'no ExecStart= in [Service]', location: null, warnings: [] };
  const location = findEngineCommand(
    parsed.words.map((w) => w.value),
    hint,
  );
  const warnings = [...parsed.warnings, ...location.warnings];
  if (location.kind === 'wrapper') return { wrapper: location.message, location, warnings };
  return {
    raw: parsed.raw,
    directive: parsed.directive,
    tokens: engineTokens(parsed, location),
    encode: encoderFor(parsed, location),
    engine: location.engine,
    location,
    unitText: parsed.unitText,
    warnings,
  };
}

// Prepare a shell script (a wrapper script's text, a README command): the engine command among its commands.
function prepareShellScript(script: string, hint?: EngineName): Preparation {
  const found = locateInScript(script, hint);
  if (!found) return { wrapper: 'no engine command found in the script', location: null, warnings: [] };
  const location: EngineLocation = { kind: 'shell', scriptIndex: -1, ...found };
  const tokens = found.words
    .slice(found.start)
    .map((w) => ({ value: w.value, start: w.start, end: w.end, quote: null }));
  return {
    raw: script,
    directive: 'script',
    tokens,
    encode: (v) => quoteShellWord(v),
    engine: found.engine,
    location,
    unitText: null,
    warnings: [...found.warnings],
  };
}

const EMPTY_READING: ExecStartReading = {
  engine: null,
  argv: [],
  settings: {},
  effective: {},
  indirections: [],
  problems: [],
  warnings: [],
  location: null,
};

// Read settings from a prepared command: variables resolved where known, indirections reported.
function readPrepared(prep: Preparation, env: Record<string, string>): ExecStartReading {
  if ('wrapper' in prep)
    return { ...EMPTY_READING, location: prep.location, warnings: [...prep.warnings, prep.wrapper] };
  const adapter = getEngine(prep.engine);
  const argv = prep.tokens.map((t) => t.value);
  const fullEnv = { ...(prep.unitText ? readUnitEnvironment(prep.unitText) : {}), ...env };
  const resolved = argv.map((a) => resolveReferences(a, fullEnv));
  const settings = { ...readEnvSettings(prep.engine, fullEnv), ...adapter.readSettings(resolved) };
  const indirections = findIndirections(adapter.readSettings(argv), settings);
  const problems = adapter.validateArgv(resolved);
  const warnings = [
    ...prep.warnings,
    ...indirectionWarnings(indirections, prep.unitText),
    ...problems.map((p) => p.message),
  ];
  return {
    engine: prep.engine,
    argv,
    settings,
    effective: adapter.effectiveSettings(settings),
    indirections,
    problems,
    warnings,
    location: prep.location,
  };
}

// Patch a prepared command; fails with a clear reason for wrappers and engine mismatches.
function patchPrepared(
  prep: Preparation,
  engine: EngineName,
  changes: Record<string, ParamValue | null>,
): ExecStartPatch {
  if ('wrapper' in prep) {
    throw new ToolError('E_ENGINE_FLAG', prep.wrapper, {
      hint: 'put the engine command line into ExecStart= (or patch the wrapper script itself)',
    });
  }
  if (prep.engine !== engine) {
    throw new ToolError('E_ENGINE_FLAG', `the command starts ${prep.engine}, not ${engine}`, {
      hint: `use --engine ${prep.engine}`,
    });
  }
  const adapter = getEngine(engine);
  const oldArgv = prep.tokens.map((t) => t.value);
  const newArgv = adapter.patchArgv(oldArgv, changes);
  const execStart = applyArgvEdits(prep.raw, prep.tokens, newArgv, prep.encode);
  const before = adapter.readSettings(oldArgv);
  const after = adapter.readSettings(newArgv);
  const changed = Object.keys(changes)
    .filter((k) => before[k] !== after[k])
    .map((key) => ({ key, from: before[key] ?? null, to: after[key] ?? null }));
  const warnings = [...prep.warnings];
  for (const c of changed) {
    if (typeof c.from === 'string' && c.from.includes('$'))
      warnings.push(`${c.key}: replaced the reference ${c.from} with a literal`);
  }
  return { execStart, directive: prep.directive, changed, warnings };
}

// Read the settings in force from a unit file or an ExecStart value.
export function readExecStart(
  text: string,
  env: Record<string, string> = {},
  opts: { engine?: EngineName } = {},
): ExecStartReading {
  return readPrepared(prepareExecStart(text, opts.engine), env);
}

// Patch engine flags (value = set or add, null = remove) into a unit's ExecStart; other bytes stay as written.
export function patchExecStart(
  text: string,
  engine: EngineName,
  changes: Record<string, ParamValue | null>,
): ExecStartPatch {
  return patchPrepared(prepareExecStart(text, engine), engine, changes);
}

// Read the settings of the engine command in a shell script (e.g. the wrapper script a unit runs).
export function readShellCommand(
  script: string,
  env: Record<string, string> = {},
  opts: { engine?: EngineName } = {},
): ExecStartReading {
  return readPrepared(prepareShellScript(script, opts.engine), env);
}

// Patch engine flags in a shell script; `execStart` of the result is the whole new script text.
export function patchShellCommand(
  script: string,
  engine: EngineName,
  changes: Record<string, ParamValue | null>,
): ExecStartPatch {
  return patchPrepared(prepareShellScript(script, engine), engine, changes);
}
