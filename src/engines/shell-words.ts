// POSIX shell word splitting for the scripts operators wrap engines in (`bash -c '...'`, start scripts): just
// enough grammar to find simple commands and the byte span of each word, so one flag can be patched in place.
import { assertSafeValue } from './systemd-words.js';

/** One shell word: its text after quote removal (expansions kept as written) and its raw span. */
export interface ShellWord {
  value: string;
  start: number;
  end: number;
  /** The word contains an unquoted expansion ($VAR, $(...), `...`) that the shell word-splits at runtime. */
  splits: boolean;
  /** The word contains any expansion at all (quoted or not). */
  expands: boolean;
}

/** One simple command: words up to ;, &, |, &&, ||, a newline or a parenthesis. */
export type ShellCommand = ShellWord[];

// Words made only of these characters need no shell quoting.
const PLAIN_SHELL_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;
// Characters that end a simple command when unquoted.
const COMMAND_BREAKS = ';&|()\n';

// Skip a balanced $( ... ) or ${ ... } starting at i (pointing at the opening bracket); returns the index after.
function skipBalanced(s: string, i: number, open: string, close: string): number {
  let depth = 0;
  for (; i < s.length; i++) {
    const c = s[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (c === "'" && open === '(') {
      i = s.indexOf("'", i + 1);
      if (i < 0) return s.length;
      continue;
    }
    if (c === open) depth++;
    else if (c === close && --depth === 0) return i + 1;
  }
  return s.length;
}

// Read the $... expansion at s[i] === '$'; returns the raw text and the index after it.
function readDollar(s: string, i: number): number {
  const c = s[i + 1];
  if (c === '(') return skipBalanced(s, i + 1, '(', ')');
  if (c === '{') return skipBalanced(s, i + 1, '{', '}');
  const m = /^[A-Za-z_][A-Za-z0-9_]*|^[0-9#?$!@*-]/.exec(s.slice(i + 1));
  return m ? i + 1 + m[0].length : i + 1;
}

// Read a double-quoted section starting after the opening quote; appends to the word, returns index after ".
function readDoubleQuoted(s: string, i: number, w: ShellWord): number {
  while (i < s.length && s[i] !== '"') {
    if (s[i] === '\\' && '$`"\\\n'.includes(s[i + 1] ?? '')) {
      if (s[i + 1] !== '\n') w.value += s[i + 1];
      i += 2;
    } else if (s[i] === '$' || s[i] === '`') {
      const end = s[i] === '$' ? readDollar(s, i) : s.indexOf('`', i + 1) + 1 || s.length;
      w.value += s.slice(i, end);
      w.expands = true;
      i = end;
    } else w.value += s[i++];
  }
  return i + 1;
}

// Read one word starting at i; returns it and the index after it.
function readShellWord(s: string, i: number): { word: ShellWord; next: number } {
  const w: ShellWord = { value: '', start: i, end: i, splits: false, expands: false };
  while (i < s.length) {
    const c = s[i];
    if (c === ' ' || c === '\t' || COMMAND_BREAKS.includes(c)) break;
    if (c === '\\') {
      if (s[i + 1] !== '\n') w.value += s[i + 1] ?? '';
      i += 2;
    } else if (c === "'") {
      const close = s.indexOf("'", i + 1);
      const end = close < 0 ? s.length : close;
      w.value += s.slice(i + 1, end);
      i = end + 1;
    } else if (c === '"') {
      i = readDoubleQuoted(s, i + 1, w);
    } else if (c === '$' || c === '`') {
      const end = c === '$' ? readDollar(s, i) : s.indexOf('`', i + 1) + 1 || s.length;
      w.value += s.slice(i, end);
      w.splits = w.expands = end > i + 1;
      i = end;
    } else w.value += s[i++];
  }
  w.end = Math.min(i, s.length);
  return { word: w, next: i };
}

// Split a shell script into simple commands (comments dropped, line continuations honoured).
export function splitShellCommands(script: string): ShellCommand[] {
  const commands: ShellCommand[] = [];
  let current: ShellCommand = [];
  let i = 0;
  const flush = () => {
    if (current.length) commands.push(current);
    current = [];
  };
  while (i < script.length) {
    const c = script[i];
    if (c === ' ' || c === '\t' || c === '\r') {
      i++;
      continue;
    }
    if (c === '\\' && script[i + 1] === '\n') {
      i += 2;
      continue;
    }
    if (COMMAND_BREAKS.includes(c)) {
      flush();
      i++;
      continue;
    }
    if (c === '#') {
      const nl = script.indexOf('\n', i);
      i = nl < 0 ? script.length : nl;
      continue;
    }
    const { word, next } = readShellWord(script, i);
    current.push(word);
    i = next;
  }
  flush();
  return commands;
}

// Quote one argv element for a POSIX shell: plain when safe, otherwise single-quoted.
export function quoteShellWord(value: string): string {
  assertSafeValue(value, JSON.stringify(value));
  if (value !== '' && PLAIN_SHELL_WORD.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
