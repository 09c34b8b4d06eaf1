// Normalise one input line, whatever its format (journal JSON, journalctl text, plain engine output), to a record.
import { readJournalFields } from './json-fields.js';

/** How a line was recognised. */
export type LineFormat = 'json' | 'journal' | 'plain' | 'meta';

/** One log line, normalised. */
export interface LogRecord {
  format: LineFormat;
  /** Timestamp text as found (journald microseconds for JSON, "Mar 09 22:28:48" for short text), or null. */
  ts: string | null;
  ident: string | null;
  pid: number | null;
  unit: string | null;
  /** True for lines written by PID 1 (systemd) and by the kernel: they are not the service's own output. */
  origin: 'systemd' | 'kernel' | 'app';
  message: string;
}

/**
 * journalctl short / short-precise and short-iso lines: stamp, host, identifier[pid], message. The host is optional
 * (`--no-hostname`, snap logs) and lazy: "ts ident[pid]: msg" is tried first, so a host is only taken when the
 * word after the stamp is not itself followed by a colon.
 */
const SHORT_LINE = /^([A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}(?:\.\d{1,6})?) (?:(\S+) )??([^\s[]+?)(?:\[(\d+)\])?:(?: (.*))?$/;
const ISO_LINE = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?) (?:(\S+) )??([^\s[]+?)(?:\[(\d+)\])?:(?: (.*))?$/;
const PASTED_SYSTEMD = /^([\w:@.-]+\.(?:service|scope)): (?:Main process exited|Failed with result|State '|Scheduled restart job|Start request repeated|Deactivated successfully|Sending signal|Killing process|A process of this unit has been killed|Consumed )/;
const META_LINE = /^-- (?:Boot [0-9a-f]+|No entries|Logs begin|Journal begins|Reboot)/;
/** `journalctl -o json-seq` starts each entry with an ASCII record separator. */
const RECORD_SEPARATOR = 0x1e;
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

// Strip terminal colour codes (journald keeps them; they would break every pattern).
function stripAnsi(s: string): string {
  return s.includes('\x1b') ? s.replace(ANSI, '') : s;
}

// Which producer wrote the line.
function originOf(ident: string | null, pid: number | null, transport: string | null): LogRecord['origin'] {
  if (ident === 'kernel' || transport === 'kernel') return 'kernel';
  if (pid === 1 || ident === 'systemd') return 'systemd';
  return 'app';
}

// A journal JSON line, or null when it is not one (truncated, other JSON).
function fromJson(line: string): LogRecord | null {
  const f = readJournalFields(line);
  if (!f) return null;
  const pid = f._PID ? Number(f._PID) : null;
  const ident = f.SYSLOG_IDENTIFIER ?? f._COMM;
  const message = f.MESSAGE === null ? '[journalctl omitted this message: over 4096 bytes; export with --all]' : stripAnsi(f.MESSAGE);
  return {
    format: 'json', ts: f.__REALTIME_TIMESTAMP, ident,
    pid: Number.isFinite(pid) ? pid : null, unit: f.UNIT ?? f._SYSTEMD_UNIT, origin: originOf(ident, pid, f._TRANSPORT), message,
  };
}

// A journalctl short / short-precise / short-iso line, or null.
function fromText(line: string): LogRecord | null {
  const m = SHORT_LINE.exec(line) ?? ISO_LINE.exec(line);
  if (!m) return null;
  const pid = m[4] ? Number(m[4]) : null;
  const ident = m[3];
  const message = stripAnsi(m[5] ?? '');
  const unit = ident === 'systemd' ? (/^(\S+\.(?:service|scope|slice)): /.exec(message)?.[1] ?? null) : null;
  return { format: 'journal', ts: m[1], ident, pid, unit, origin: originOf(ident, pid, null), message };
}

// Parse one line; never throws, never drops: anything unrecognised is plain engine output.
export function parseLine(raw: string): LogRecord {
  const line = raw.charCodeAt(0) === RECORD_SEPARATOR ? raw.slice(1) : raw;
  const c = line.charCodeAt(0);
  if (c === 123) {
    const r = fromJson(line);
    if (r) return r;
  } else if (c === 45 && META_LINE.test(line)) {
    return { format: 'meta', ts: null, ident: null, pid: null, unit: null, origin: 'app', message: line };
  } else if ((c >= 65 && c <= 90) || (c >= 48 && c <= 57)) {
    const r = fromText(line);
    if (r) return r;
  }
  // A systemd line pasted without the journal prefix ("x.service: Main process exited, ...") is still systemd's.
  const unitLine = c >= 97 && c <= 122 ? PASTED_SYSTEMD.exec(line) : null;
  if (unitLine) return { format: 'plain', ts: null, ident: 'systemd', pid: null, unit: unitLine[1], origin: 'systemd', message: stripAnsi(line) };
  return { format: 'plain', ts: null, ident: null, pid: null, unit: null, origin: 'app', message: stripAnsi(line) };
}
