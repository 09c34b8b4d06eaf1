// systemd ExecStart word syntax (systemd.service(5) "Command lines"): unit-file continuation lines, quotes,
// C-style escapes, $VAR/${VAR} references, %-specifiers. Every word keeps its byte span so a patch can
// rewrite one word and leave the rest of the operator's command byte-identical.
import { ToolError } from '../errors.js';

/** One word of an ExecStart value, decoded, with where it sits in the raw text. */
export interface RawWord {
  /** Decoded text: quotes and escapes removed; $VAR, ${VAR} and %-specifiers kept as written ($$ -> $). */
  value: string;
  /** Raw span [start, end) in the text the word was read from. */
  start: number;
  end: number;
  /** Raw index of each decoded character, and the raw index just after it (for patching inside a word). */
  map: number[];
  mapEnd: number[];
  /** The quote character that opened the word, if it started with one. */
  quote: '"' | "'" | null;
}

/** An ExecStart value split into its prefix characters and words. */
export interface ExecWords {
  /** Special executable prefixes ("-", "@", ":", "+", "!", "!!") in front of the first word. */
  prefix: string;
  words: RawWord[];
}

/** Where an ExecStart= (or a Quadlet Exec=) value sits in a unit file. */
export interface ExecLocation {
  /** The directive found: "ExecStart" or "Exec" (Podman Quadlet, container arguments). */
  directive: string;
  /** The raw value: from after "=" to the end of the logical line, continuation lines included. */
  value: string;
  start: number;
  end: number;
  warnings: string[];
}

// Characters systemd accepts as executable prefixes on the first word.
const EXEC_PREFIX_CHARS = '-@:+!';
// C escapes systemd's cunescape() knows; others are kept verbatim (EXTRACT_CUNESCAPE_RELAX).
const SIMPLE_ESCAPES: Record<string, string> = {
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  s: ' ',
  '\\': '\\',
  '"': '"',
  "'": "'",
};
// Words made only of these characters need no quoting in a unit file.
const PLAIN_WORD = /^[A-Za-z0-9_@+=:,./-]+$/;
// Control characters cannot be written safely into an ExecStart line (and no engine flag needs them).
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this check refuses
const CONTROL_CHARS = /[\x00-\x1f\x7f]/;
// A unit-file comment line (systemd: first non-blank character is # or ;).
const COMMENT_LINE = /^[ \t]*[#;]/;

// Decide whether the text at i is a backslash-newline continuation (systemd joins those lines with a space).
function continuationLength(raw: string, i: number): number {
  if (raw[i] !== '\\') return 0;
  if (raw[i + 1] === '\n') return 2;
  if (raw[i + 1] === '\r' && raw[i + 2] === '\n') return 3;
  return 0;
}

// Skip comment lines that follow a continuation (systemd ignores them inside a continued line).
function skipCommentLines(raw: string, i: number): number {
  while (i < raw.length) {
    const nl = raw.indexOf('\n', i);
    const line = raw.slice(i, nl < 0 ? raw.length : nl);
    if (!COMMENT_LINE.test(line)) return i;
    i = nl < 0 ? raw.length : nl + 1;
  }
  return i;
}

// Decode one C escape at raw[i] === '\\'; returns the text and how many raw characters it used.
function decodeEscape(raw: string, i: number): { text: string; used: number } {
  const c = raw[i + 1];
  if (c === undefined) return { text: '\\', used: 1 };
  if (c in SIMPLE_ESCAPES) return { text: SIMPLE_ESCAPES[c], used: 2 };
  const hex = c === 'x' ? /^[0-9a-fA-F]{2}/ : c === 'u' ? /^[0-9a-fA-F]{4}/ : c === 'U' ? /^[0-9a-fA-F]{8}/ : null;
  if (hex) {
    const m = hex.exec(raw.slice(i + 2));
    if (m) return { text: String.fromCodePoint(parseInt(m[0], 16)), used: 2 + m[0].length };
  }
  const oct = /^[0-7]{3}/.exec(raw.slice(i + 1));
  if (oct) return { text: String.fromCharCode(parseInt(oct[0], 8)), used: 1 + oct[0].length };
  return { text: '\\' + c, used: 2 };
}

// Read one word starting at i (not whitespace); returns the word and the index after it.
function readWord(raw: string, i: number): { word: RawWord; next: number } {
  const word: RawWord = { value: '', start: i, end: i, map: [], mapEnd: [], quote: null };
  let quote: '"' | "'" | null = null;
  if (raw[i] === '"' || raw[i] === "'") word.quote = raw[i] as '"' | "'";
  const push = (text: string, from: number, to: number) => {
    for (const ch of text) {
      word.value += ch;
      word.map.push(from);
      word.mapEnd.push(to);
    }
  };
  while (i < raw.length) {
    const cont = continuationLength(raw, i);
    if (cont) {
      if (!quote) break;
      push(' ', i, i + cont);
      i = skipCommentLines(raw, i + cont);
      continue;
    }
    const c = raw[i];
    if (!quote && (c === ' ' || c === '\t' || c === '\n')) break;
    if (quote ? c === quote : c === '"' || c === "'") {
      quote = quote ? null : (c as '"' | "'");
      i++;
      continue;
    }
    if (c === '\\') {
      const e = decodeEscape(raw, i);
      push(e.text, i, i + e.used);
      i += e.used;
      continue;
    }
    if (c === '$' && raw[i + 1] === '$') {
      push('$', i, i + 2);
      i += 2;
      continue;
    }
    if (c === '%' && raw[i + 1] === '%') {
      push('%', i, i + 2);
      i += 2;
      continue;
    }
    push(c, i, i + 1);
    i++;
  }
  word.end = i;
  return { word, next: i };
}

// Split an ExecStart value into prefix and words, as systemd does (variables and specifiers left as written).
export function splitExecWords(raw: string): ExecWords {
  const words: RawWord[] = [];
  let prefix = '';
  let i = 0;
  for (;;) {
    while (i < raw.length) {
      const cont = continuationLength(raw, i);
      if (cont) {
        i = skipCommentLines(raw, i + cont);
        continue;
      }
      if (raw[i] !== ' ' && raw[i] !== '\t' && raw[i] !== '\n') break;
      i++;
    }
    if (i >= raw.length) break;
    if (words.length === 0 && !prefix) {
      while (EXEC_PREFIX_CHARS.includes(raw[i]) && i < raw.length) prefix += raw[i++];
      if (prefix && (raw[i] === ' ' || raw[i] === undefined)) continue;
    }
    const { word, next } = readWord(raw, i);
    words.push(word);
    i = next;
  }
  return { prefix, words };
}

// Refuse values that cannot be represented safely in a unit file.
export function assertSafeValue(value: string, what: string): void {
  if (CONTROL_CHARS.test(value)) {
    throw new ToolError('E_UNSAFE_VALUE', `${what}: value contains a control character (newline, tab or NUL)`, {
      hint: 'engine flag values never need control characters; pass the value on one line without them',
    });
  }
}

// Escape text for the inside of a systemd quoted word (the quote char, backslash, $ and % are special).
export function escapeForSystemdQuote(text: string, quote: '"' | "'"): string {
  return text
    .replace(/\\/g, '\\\\')
    .replace(quote === '"' ? /"/g : /'/g, `\\${quote}`)
    .replace(/\$/g, '$$$$')
    .replace(/%/g, '%%');
}

// Encode one argv element as a systemd word: plain when safe, otherwise quoted so it stays one literal word.
export function quoteSystemdWord(value: string, quote: '"' | "'" | null = null): string {
  assertSafeValue(value, JSON.stringify(value));
  if (value !== '' && PLAIN_WORD.test(value) && !quote) return value;
  const q = quote ?? (value.includes('"') && !value.includes("'") ? "'" : '"');
  return q + escapeForSystemdQuote(value, q) + q;
}

// Find the end of a logical unit-file line that starts at i (continuations and comment lines included).
function logicalLineEnd(text: string, i: number): number {
  for (;;) {
    const nl = text.indexOf('\n', i);
    const lineEnd = nl < 0 ? text.length : nl;
    const line = text.slice(i, lineEnd).replace(/\r$/, '');
    if (!line.endsWith('\\') || nl < 0) return lineEnd;
    i = skipCommentLines(text, nl + 1);
    if (i >= text.length) return text.length;
  }
}

// Warn about flag-looking lines right after ExecStart that systemd ignores (a missing trailing backslash).
function orphanLineWarnings(text: string, end: number): string[] {
  const warnings: string[] = [];
  const rest = text.slice(end + 1).split('\n');
  for (const line of rest) {
    if (!/^\s+-/.test(line) || (line.includes('=') && /^\s*\w+=/.test(line))) break;
    warnings.push(
      `line "${line.trim()}" follows ExecStart without a trailing backslash on the line before: systemd ignores it, ` +
        'so these flags are NOT in force',
    );
  }
  return warnings;
}

// Locate the effective ExecStart= (last non-empty one of [Service]; Quadlet: Exec= of [Container]) in a unit.
export function locateExecStart(text: string): ExecLocation | null {
  let section = '';
  let found: ExecLocation | null = null;
  let i = 0;
  while (i < text.length) {
    const nl = text.indexOf('\n', i);
    const lineEnd = nl < 0 ? text.length : nl;
    const line = text.slice(i, lineEnd);
    const header = /^\s*\[([^\]]+)\]\s*$/.exec(line);
    const directive = /^[ \t]*(ExecStart|Exec)[ \t]*=[ \t]*/.exec(line);
    let next = lineEnd + 1;
    if (header) section = header[1];
    else if (directive && !COMMENT_LINE.test(line) && isExecSection(directive[1], section)) {
      const start = i + directive[0].length;
      const end = logicalLineEnd(text, i);
      const value = text.slice(start, end).replace(/\r$/, '');
      if (value.trim() === '') found = null;
      else found = { directive: directive[1], value, start, end: start + value.length, warnings: [] };
      next = end + 1;
    }
    i = next;
  }
  if (found) found.warnings.push(...orphanLineWarnings(text, found.end));
  if (found?.directive === 'Exec')
    found.warnings.push('Podman Quadlet Exec= holds the container arguments, not ExecStart');
  return found;
}

// ExecStart= counts in [Service]; Exec= in a Quadlet [Container].
function isExecSection(directive: string, section: string): boolean {
  return directive === 'ExecStart' ? section === 'Service' : section === 'Container';
}

// Read Environment= assignments of a unit (systemd does not expand variables inside them).
export function readUnitEnvironment(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const m of text.matchAll(/^[ \t]*Environment[ \t]*=(.*)$/gm)) {
    for (const w of splitExecWords(m[1]).words) {
      const eq = w.value.indexOf('=');
      if (eq > 0) env[w.value.slice(0, eq)] = w.value.slice(eq + 1);
    }
  }
  return env;
}

// Names of the EnvironmentFile= entries of a unit (the values live outside the unit).
export function readEnvironmentFiles(text: string): string[] {
  return [...text.matchAll(/^[ \t]*EnvironmentFile[ \t]*=[ \t]*(.+?)\s*$/gm)].map((m) => m[1]);
}
