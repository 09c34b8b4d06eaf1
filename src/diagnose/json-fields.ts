// Read the few fields diagnose needs from one `journalctl -o json` line without parsing the whole object.

/** The journal fields diagnose reads; everything else in an entry is ignored. */
export interface JournalFields {
  MESSAGE: string | null;
  _PID: string | null;
  SYSLOG_IDENTIFIER: string | null;
  _COMM: string | null;
  __REALTIME_TIMESTAMP: string | null;
  _TRANSPORT: string | null;
  UNIT: string | null;
  _SYSTEMD_UNIT: string | null;
  PRIORITY: string | null;
}

const FIELD_NAMES = ['MESSAGE', '_PID', 'SYSLOG_IDENTIFIER', '_COMM', '__REALTIME_TIMESTAMP', '_TRANSPORT', 'UNIT', '_SYSTEMD_UNIT', 'PRIORITY'] as const;

// Skip JSON whitespace from i.
function skipSpace(s: string, i: number): number {
  while (i < s.length && (s.charCodeAt(i) === 32 || s.charCodeAt(i) === 9)) i++;
  return i;
}

// Decode an array of byte values (journald's form for non-UTF-8 or ANSI-coloured fields).
function decodeByteArray(raw: string): string | null {
  try {
    const arr = JSON.parse(raw) as unknown;
    if (!Array.isArray(arr)) return null;
    if (arr.every((v) => typeof v === 'number')) return Buffer.from(arr as number[]).toString('utf8');
    const first = arr.find((v) => typeof v === 'string');
    return typeof first === 'string' ? first : null; // a repeated field: keep the first value
  } catch {
    return null;
  }
}

// Read the value starting at i: a string (fast path without escapes), null, or an array; undefined when malformed.
function readValue(s: string, i: number): string | null | undefined {
  const c = s.charCodeAt(i);
  if (c === 34) {
    let j = i + 1;
    let escaped = false;
    for (; j < s.length; j++) {
      const d = s.charCodeAt(j);
      if (d === 92) { escaped = true; j++; continue; }
      if (d === 34) break;
    }
    if (j >= s.length) return undefined;
    if (!escaped) return s.slice(i + 1, j);
    try { return JSON.parse(s.slice(i, j + 1)) as string; } catch { return undefined; }
  }
  if (s.startsWith('null', i)) return null;
  if (c === 91) {
    const end = s.indexOf(']', i);
    return end === -1 ? undefined : decodeByteArray(s.slice(i, end + 1));
  }
  return undefined;
}

// Extract the wanted fields; returns null when the line is not a journal JSON object (truncated, other JSON).
export function readJournalFields(line: string): JournalFields | null {
  const out = {} as Record<(typeof FIELD_NAMES)[number], string | null>;
  let found = 0;
  for (const name of FIELD_NAMES) {
    out[name] = null;
    const k = line.indexOf(`"${name}"`);
    if (k === -1) continue;
    let i = skipSpace(line, k + name.length + 2);
    if (line.charCodeAt(i) !== 58) continue;
    i = skipSpace(line, i + 1);
    const v = readValue(line, i);
    if (v === undefined) { if (name === 'MESSAGE') return null; continue; }
    out[name] = v;
    found++;
  }
  return found === 0 || !line.includes('"MESSAGE"') ? null : out;
}
