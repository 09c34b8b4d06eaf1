// Pure systemd unit-file knowledge: unit names, spectune's drop-in and state paths, `systemctl cat` parsing,
// effective directives and drop-in rendering. No I/O here: everything is text in, text out.
import { ToolError } from '../errors.js';

export { normalizeUnitName } from '../unit-name.js';

/** Sorted late so it wins over the operator's own drop-ins, yet leaves 91-99 for them to override us on purpose. */
export const DROPIN_NAME = '90-spectune.conf';
/** Where spectune keeps its per-unit history on the service host (previous drop-ins, the known-good marker). */
export const STATE_ROOT = '/var/lib/spectune';
/** Where systemd reads administrator drop-ins from. */
const SYSTEM_UNIT_DIR = '/etc/systemd/system';

/** One file of a unit: the unit file itself or a drop-in, as `systemctl cat` shows it. */
export interface UnitFile {
  path: string;
  text: string;
}

/** One `Key=value` assignment of a unit file. */
export interface UnitEntry {
  section: string;
  key: string;
  value: string;
  /** Path of the file the entry came from. */
  source: string;
}

// Path of spectune's drop-in for a unit.
export function dropInPath(unit: string): string {
  return `${SYSTEM_UNIT_DIR}/${unit}.d/${DROPIN_NAME}`;
}

// Paths of spectune's per-unit state on the service host.
export function statePaths(unit: string) {
  const dir = `${STATE_ROOT}/${unit}`;
  return { dir, versionsDir: `${dir}/dropins`, good: `${dir}/good`, current: `${dir}/current` };
}

// Path of one kept drop-in version.
export function versionPath(unit: string, version: number): string {
  return `${statePaths(unit).versionsDir}/${version}.conf`;
}

// Split `systemctl cat` output into its files (each begins with a "# /path" header line).
export function splitCatOutput(text: string): UnitFile[] {
  const files: UnitFile[] = [];
  let current: { path: string; lines: string[] } | null = null;
  for (const line of text.split('\n')) {
    const header = /^# (\/\S+)$/.exec(line);
    if (header && (current === null || current.lines.length === 0 || current.lines[current.lines.length - 1] === '')) {
      if (current) files.push({ path: current.path, text: trimTrailingBlank(current.lines) });
      current = { path: header[1], lines: [] };
    } else if (current) {
      current.lines.push(line);
    }
  }
  if (current) files.push({ path: current.path, text: trimTrailingBlank(current.lines) });
  return files;
}

// Join lines and drop the blank lines `systemctl cat` puts between files.
function trimTrailingBlank(lines: string[]): string {
  const copy = [...lines];
  while (copy.length && copy[copy.length - 1].trim() === '') copy.pop();
  return copy.length ? `${copy.join('\n')}\n` : '';
}

// Parse a unit file into assignments, joining backslash continuations and skipping comments.
export function parseUnitFile(file: UnitFile): UnitEntry[] {
  const entries: UnitEntry[] = [];
  let section = '';
  const lines = file.text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i].trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    while (line.endsWith('\\') && i + 1 < lines.length) line = `${line.slice(0, -1)} ${lines[++i].trim()}`;
    const sec = /^\[(.+)\]$/.exec(line);
    if (sec) {
      section = sec[1];
      continue;
    }
    const eq = line.indexOf('=');
    if (eq > 0)
      entries.push({ section, key: line.slice(0, eq).trim(), value: line.slice(eq + 1).trim(), source: file.path });
  }
  return entries;
}

// The effective value of a list directive (ExecStart): an empty assignment resets, the last value wins.
export function effectiveListValue(
  files: UnitFile[],
  section: string,
  key: string,
): { value: string; source: string } | null {
  let found: { value: string; source: string } | null = null;
  for (const e of files.flatMap(parseUnitFile)) {
    if (e.section !== section || e.key !== key) continue;
    found = e.value === '' ? null : { value: e.value, source: e.source };
  }
  return found;
}

// Effective Environment= variables of the unit (later assignments win; quotes removed), for $VAR expansion.
export function effectiveEnvironment(files: UnitFile[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of files.flatMap(parseUnitFile)) {
    if (e.section !== 'Service' || e.key !== 'Environment') continue;
    if (e.value === '') {
      for (const k of Object.keys(env)) delete env[k];
      continue;
    }
    for (const word of splitEnvironmentWords(e.value)) {
      const eq = word.indexOf('=');
      if (eq > 0) env[word.slice(0, eq)] = word.slice(eq + 1);
    }
  }
  return env;
}

// Split an Environment= value into its (possibly quoted) words.
function splitEnvironmentWords(value: string): string[] {
  const words: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (let m = re.exec(value); m; m = re.exec(value)) words.push(m[1] ?? m[2] ?? m[3]);
  return words;
}

/** What spectune's drop-in sets. */
export interface DropInContent {
  execStart: string;
  environment: Record<string, string>;
  timeoutStopSec: number | null;
}

// Refuse a value that would break out of its line in a unit file.
export function assertSingleLine(what: string, value: string): void {
  if (/[\n\r\0]/.test(value)) {
    throw new ToolError('E_UNSAFE_VALUE', `refusing ${what}: it contains a line break or NUL`, {
      hint: 'unit files are line based; remove the control characters',
    });
  }
}

// Quote an Environment= word the way systemd reads it back ("KEY=value" in double quotes, escapes inside).
function quoteEnvironmentWord(key: string, value: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) {
    throw new ToolError('E_UNSAFE_VALUE', `refusing environment variable name ${JSON.stringify(key)}`, {
      hint: 'names are letters, digits and _',
    });
  }
  assertSingleLine(`the value of ${key}`, value);
  return `"${key}=${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/%/g, '%%')}"`;
}

// Render spectune's drop-in: reset ExecStart, then the candidate command, then optional Environment/TimeoutStopSec.
export function renderDropIn(content: DropInContent): string {
  assertSingleLine('ExecStart', content.execStart);
  const lines = [
    '# Managed by spectune: the candidate configuration. `spectune rollback` restores the last known-good one.',
    '[Service]',
    'ExecStart=',
    `ExecStart=${content.execStart}`,
  ];
  const env = Object.entries(content.environment).sort(([a], [b]) => a.localeCompare(b));
  for (const [k, v] of env) lines.push(`Environment=${quoteEnvironmentWord(k, v)}`);
  if (content.timeoutStopSec !== null) lines.push(`TimeoutStopSec=${Math.ceil(content.timeoutStopSec)}`);
  return `${lines.join('\n')}\n`;
}

// Read back spectune's own drop-in (so a new plan keeps its Environment/TimeoutStopSec unless changed).
export function parseDropIn(file: UnitFile): DropInContent {
  const env = effectiveEnvironment([file]);
  const stop = parseUnitFile(file)
    .filter((e) => e.key === 'TimeoutStopSec')
    .pop();
  const exec = effectiveListValue([file], 'Service', 'ExecStart');
  return { execStart: exec?.value ?? '', environment: env, timeoutStopSec: stop ? Number(stop.value) || null : null };
}

/** Whether spectune's drop-in `ours` only restates the operator's own config (same ExecStart, no Environment or
 * TimeoutStopSec of its own that differs): then it is a needless copy that would hide the operator's later edits. */
export function isOperatorsOwnConfig(files: UnitFile[], ours: UnitFile, isOurs: (f: UnitFile) => boolean): boolean {
  const operator = files.filter((f) => !isOurs(f));
  const own = parseDropIn(ours);
  const exec = effectiveListValue(operator, 'Service', 'ExecStart');
  if (!exec || exec.value !== own.execStart) return false;
  const env = effectiveEnvironment(operator);
  if (Object.entries(own.environment).some(([k, v]) => env[k] !== v)) return false;
  return own.timeoutStopSec === null;
}
