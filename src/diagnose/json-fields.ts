// Read the few fields diagnose needs from one `journalctl -o json` line in a single pass, without parsing
// (or allocating) the other fields: the hot path of a 1 GB export.

/** The journal fields diagnose reads; everything else in an entry is skipped. */
export interface JournalFields {
  MESSAGE: string | null;
  _PID: string | null;
  SYSLOG_IDENTIFIER: string | null;
  _COMM: string | null;
  __REALTIME_TIMESTAMP: string | null;
  _TRANSPORT: string | null;
  UNIT: string | null;
  _SYSTEMD_UNIT: string | null;
}

type Wanted = keyof JournalFields;
/** Wanted keys by length, so that most keys are rejected without comparing (or allocating) them. */
const WANTED_BY_LENGTH = new Map<number, Wanted[]>();
for (const k of ['MESSAGE', '_PID', 'SYSLOG_IDENTIFIER', '_COMM', '__REALTIME_TIMESTAMP', '_TRANSPORT', 'UNIT', '_SYSTEMD_UNIT'] as Wanted[]) {
  WANTED_BY_LENGTH.set(k.length, [...(WANTED_BY_LENGTH.get(k.length) ?? []), k]);
}

// The wanted key spelled at line[start, start+len), or null.
function wantedKey(line: string, start: number, len: number): Wanted | null {
  const candidates = WANTED_BY_LENGTH.get(len);
  if (!candidates) return null;
  for (const k of candidates) if (line.startsWith(k, start)) return k;
  return null;
}
const QUOTE = 34;
const BACKSLASH = 92;

// Skip JSON whitespace from i.
function skipSpace(s: string, i: number): number {
  while (i < s.length && (s.charCodeAt(i) === 32 || s.charCodeAt(i) === 9)) i++;
  return i;
}

// Index of the quote closing the string that opens at `open`, or -1 (escaped quotes are skipped).
function closingQuote(s: string, open: number): number {
  let j = s.indexOf('"', open + 1);
  while (j !== -1) {
    let k = j - 1;
    while (s.charCodeAt(k) === BACKSLASH) k--;
    if ((j - k) % 2 === 1) return j;
    j = s.indexOf('"', j + 1);
  }
  return -1;
}

// Decode an array of byte values (journald's form for non-UTF-8 or ANSI-coloured fields); a repeated field keeps its first value.
function decodeArray(raw: string): string | null {
  try {
    const arr = JSON.parse(raw) as unknown;
    if (!Array.isArray(arr)) return null;
    if (arr.every((v) => typeof v === 'number')) return Buffer.from(arr as number[]).toString('utf8');
    const first = arr.find((v) => typeof v === 'string');
    return typeof first === 'string' ? first : null;
  } catch {
    return null;
  }
}

// End (exclusive) of the value starting at i, and its decoded text when `keep`; null end when malformed.
function readValue(s: string, i: number, keep: boolean): { end: number; value: string | null } | null {
  const c = s.charCodeAt(i);
  if (c === QUOTE) {
    const j = closingQuote(s, i);
    if (j === -1) return null;
    if (!keep) return { end: j + 1, value: null };
    const raw = s.slice(i + 1, j);
    if (!raw.includes('\\')) return { end: j + 1, value: raw };
    try { return { end: j + 1, value: JSON.parse(s.slice(i, j + 1)) as string }; } catch { return null; }
  }
  if (c === 91) {
    const j = s.indexOf(']', i);
    return j === -1 ? null : { end: j + 1, value: keep ? decodeArray(s.slice(i, j + 1)) : null };
  }
  let j = i;
  while (j < s.length && s.charCodeAt(j) !== 44 && s.charCodeAt(j) !== 125) j++;
  return { end: j, value: null };
}

// Extract the wanted fields; null when the line is not a complete journal JSON object (truncated, other JSON).
export function readJournalFields(line: string): JournalFields | null {
  const out: JournalFields = { MESSAGE: null, _PID: null, SYSLOG_IDENTIFIER: null, _COMM: null, __REALTIME_TIMESTAMP: null, _TRANSPORT: null, UNIT: null, _SYSTEMD_UNIT: null };
  let sawMessage = false;
  let i = skipSpace(line, 1);
  while (i < line.length && line.charCodeAt(i) === QUOTE) {
    const keyEnd = line.indexOf('"', i + 1);
    if (keyEnd === -1) return null;
    const key = wantedKey(line, i + 1, keyEnd - i - 1);
    i = skipSpace(line, keyEnd + 1);
    if (line.charCodeAt(i) !== 58) return null;
    i = skipSpace(line, i + 1);
    const v = readValue(line, i, key !== null);
    if (!v) return null;
    if (key) out[key] = v.value;
    if (key === 'MESSAGE') sawMessage = true;
    i = skipSpace(line, v.end);
    if (line.charCodeAt(i) === 44) i = skipSpace(line, i + 1);
  }
  return sawMessage && line.charCodeAt(i) === 125 ? out : null;
}
