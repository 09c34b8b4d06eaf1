// Find the engine invocation inside a launch command: directly, after env/exec/docker-run prefixes, or inside a
// `bash -c '...'` script. A command that runs some other program is a wrapper whose flags cannot be seen here.
import { splitShellCommands, type ShellWord } from './shell-words.js';
import { baseName, matchInvocation } from './invocation.js';
import { ENGINE_NAMES, getEngine } from './registry.js';
import type { EngineName } from './types.js';

/** Where the engine invocation is in a command line. */
export type EngineLocation =
  /** argv.slice(start) is the engine's own argv. */
  | { kind: 'direct'; engine: EngineName; start: number; warnings: string[] }
  /** argv[scriptIndex] is a shell script; words.slice(start) of one of its commands is the engine argv. */
  | { kind: 'shell'; engine: EngineName; scriptIndex: number; words: ShellWord[]; start: number; warnings: string[] }
  /** The command runs a program spectune does not know (a wrapper script, a custom launcher). */
  | { kind: 'wrapper'; program: string; message: string; warnings: string[] };

// Shells whose -c script spectune looks into.
const SHELLS = /^(ba|da|z|a)?sh$/;
// Tokens in front of a command that do not change which program runs.
const COMMAND_PREFIXES = new Set(['exec', 'env', 'nohup', 'command', 'then', 'else', 'do', 'time', '!', '{']);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*=/;

// Which engine, if any, starts at argv[i] (the registered adapters' invocations, in registry order).
export function matchEngineAt(argv: readonly string[], i: number): EngineName | null {
  for (const name of ENGINE_NAMES) {
    if (getEngine(name).invocations.some((inv) => matchInvocation(argv, i, inv) !== null)) return name;
  }
  return null;
}

// Scan a command for the first engine invocation.
function scanForEngine(argv: readonly string[]): { engine: EngineName; start: number } | null {
  for (let i = 0; i < argv.length; i++) {
    const engine = matchEngineAt(argv, i);
    if (engine) return { engine, start: i };
  }
  return null;
}

// Index of the program word after env assignments and prefixes such as exec/env/nohup.
function programIndex(argv: readonly string[]): number {
  let i = 0;
  while (i < argv.length && (COMMAND_PREFIXES.has(argv[i]) || ASSIGNMENT.test(argv[i]))) i++;
  return i;
}

// Describe runtime-expanded words of the engine command that may carry flags nobody can read statically.
function expansionWarnings(words: ShellWord[], start: number): string[] {
  return words
    .slice(start)
    .filter((w) => w.splits)
    .map((w) => `${w.value} is expanded and word-split by the shell at run time: any flags it carries are not read`);
}

// Find the engine command inside a shell script (the -c argument of a shell wrapper).
export function locateInScript(
  script: string,
  hint?: EngineName,
): { words: ShellWord[]; engine: EngineName; start: number; warnings: string[] } | null {
  const isFunctionName = (words: ShellWord[]) => /^\s*\(\s*\)/.test(script.slice(words[words.length - 1].end));
  const commands = splitShellCommands(script).filter((words) => !isFunctionName(words));
  for (const words of commands) {
    const found = scanForEngine(words.map((w) => w.value));
    if (found) return { words, ...found, warnings: expansionWarnings(words, found.start) };
  }
  if (!hint) return null;
  for (const words of commands) {
    const values = words.map((w) => w.value);
    const p = programIndex(values);
    if (values[0] === 'exec' && words[p]?.expands && values.slice(p + 1).some((v) => v.startsWith('--'))) {
      return {
        words,
        engine: hint,
        start: p,
        warnings: [
          `the engine binary is ${values[p]} (a variable): assumed to be ${hint}`,
          ...expansionWarnings(words, p),
        ],
      };
    }
  }
  return null;
}

// Say that flags live in a program spectune cannot look into.
function wrapperResult(program: string, what: string): EngineLocation {
  return {
    kind: 'wrapper',
    program,
    message: `unit calls ${what} ${program}: flags cannot be read/patched from the unit`,
    warnings: [],
  };
}

// Locate the engine invocation in a decoded command line (optionally told which engine to expect).
export function findEngineCommand(argv: readonly string[], hint?: EngineName): EngineLocation {
  const direct = scanForEngine(argv);
  if (direct) return { kind: 'direct', ...direct, warnings: [] };
  const p = programIndex(argv);
  const program = argv[p] ?? '';
  if (SHELLS.test(baseName(program))) {
    const c = argv.findIndex((a, k) => k > p && /^-[a-z]*c[a-z]*$/.test(a));
    if (c < 0 || argv[c + 1] === undefined) return wrapperResult(argv[c < 0 ? p + 1 : p] ?? program, 'wrapper script');
    const inner = locateInScript(argv[c + 1], hint);
    if (inner) return { kind: 'shell', scriptIndex: c + 1, ...inner };
    return {
      kind: 'wrapper',
      program,
      warnings: [],
      message: `unit runs a ${baseName(program)} -c script with no recognisable engine command: flags cannot be read/patched from the unit (pass the engine to look for a variable binary)`,
    };
  }
  return wrapperResult(program, 'wrapper script');
}

// Tell which engine an argv starts (directly or inside a shell -c wrapper), or null.
export function detectEngine(argv: readonly string[]): EngineName | null {
  const loc = findEngineCommand(argv);
  return loc.kind === 'wrapper' ? null : loc.engine;
}
