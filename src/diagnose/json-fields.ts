// Read the few fields diagnose needs from one `journalctl -o json` line without parsing (or allocating) the other
// fields: the hot path of a 1 GB export (an entry carries ~25 fields, the journal model keeps 10).

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
  __CURSOR: string | null;
  _HOSTNAME: string | null;
}

type Wanted = keyof JournalFields;
const WANTED: Wanted[] = [
  'MESSAGE',
  '_PID',
  'SYSLOG_IDENTIFIER',
  '_COMM',
  '__REALTIME_TIMESTAMP',
  '_TRANSPORT',
  'UNIT',
  '_SYSTEMD_UNIT',
  '__CURSOR',
  '_HOSTNAME',
];
const QUOTE = 34;
const BACKSLASH = 92;

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

// The decoded value starting at i (a string, a byte array or null), or undefined when malformed.
function readValue(s: string, i: number): string | null | undefined {
  const c = s.charCodeAt(i);
  if (c === QUOTE) {
    const j = closingQuote(s, i);
    if (j === -1) return undefined;
    const raw = s.slice(i + 1, j);
    if (!raw.includes('\\')) return raw;
    try {
      return JSON.parse(s.slice(i, j + 1)) as string;
    } catch {
      return undefined;
    }
  }
  if (c === 91) {
    const j = s.indexOf(']', i);
    return j === -1 ? undefined : decodeArray(s.slice(i, j + 1));
  }
  return null;
}

/** Wanted keys by length, so that most keys are rejected without comparing (or allocating) them. */
const WANTED_BY_LENGTH = new Map<number, Wanted[]>();
for (const k of WANTED) WANTED_BY_LENGTH.set(k.length, [...(WANTED_BY_LENGTH.get(k.length) ?? []), k]);

// The wanted key spelled at line[start, start+len), or null.
function wantedKey(line: string, start: number, len: number): Wanted | null {
  const candidates = WANTED_BY_LENGTH.get(len);
  if (!candidates) return null;
  for (const k of candidates) if (line.startsWith(k, start)) return k;
  return null;
}

// Extract the wanted fields; null when the line is not a complete journal JSON object (truncated, other JSON).
// Members are found by hopping from one `,"` to the next: inside a JSON string a quote is always escaped, so `,"`
// only ever separates members, and values of unwanted keys are skipped without being read.
export function readJournalFields(line: string): JournalFields | null {
  let end = line.length - 1;
  while (end > 0 && (line.charCodeAt(end) === 32 || line.charCodeAt(end) === 9)) end--;
  if (line.charCodeAt(end) !== 125) return null;
  const out: JournalFields = {
    MESSAGE: null,
    _PID: null,
    SYSLOG_IDENTIFIER: null,
    _COMM: null,
    __REALTIME_TIMESTAMP: null,
    _TRANSPORT: null,
    UNIT: null,
    _SYSTEMD_UNIT: null,
    __CURSOR: null,
    _HOSTNAME: null,
  };
  let sawMessage = false;
  let at = line.indexOf('"', 1);
  while (at !== -1 && at < end) {
    const keyEnd = line.indexOf('"', at + 1);
    if (keyEnd === -1) return null;
    const key = wantedKey(line, at + 1, keyEnd - at - 1);
    let next = keyEnd + 1;
    if (key) {
      let v = keyEnd + 1;
      while (line.charCodeAt(v) === 32) v++;
      if (line.charCodeAt(v) !== 58) return null;
      v++;
      while (line.charCodeAt(v) === 32) v++;
      const value = readValue(line, v);
      if (value === undefined) return null;
      if (out[key] === null) out[key] = value;
      if (key === 'MESSAGE') {
        sawMessage = true;
        next = v + 1;
      }
    }
    const sep = line.indexOf(',"', next);
    at = sep === -1 ? -1 : sep + 1;
  }
  return sawMessage ? out : null;
}
