// The one journal model: every input line, whatever its format (journal JSON, journalctl text, plain engine output),
// becomes a JournalEntry with the fields its format carries; diagnose and service control read the same entries.
import { readJournalFields } from './json-fields.js';

/** How a line was recognised. */
export type LineFormat = 'json' | 'journal' | 'plain' | 'meta';

/** One journal entry (or log line), normalised: the fields its input carried, null where it carried none. */
export interface JournalEntry {
  format: LineFormat;
  /** Timestamp text as found (journald microseconds for JSON, "Mar 09 22:28:48" for short text), or null. */
  ts: string | null;
  /** Wall-clock time on the writing host, epoch microseconds, year included (journal JSON); null for text. */
  realtimeUs: number | null;
  /** The journal cursor (journal JSON), to read on after this entry. */
  cursor: string | null;
  /** The host that wrote it (_HOSTNAME, or the host column of journalctl text). */
  hostname: string | null;
  identifier: string | null;
  pid: number | null;
  /** The unit it is from (journal JSON's _SYSTEMD_UNIT) or, for systemd's own lines, about (UNIT). */
  unit: string | null;
  /** journald's _TRANSPORT (stdout, journal, syslog, kernel, audit), when the input said. */
  transport: string | null;
  /** Who wrote it: PID 1 (systemd) and the kernel are not the service's own output. */
  origin: 'systemd' | 'kernel' | 'app';
  message: string;
}

/** A parsed input line (the same model). */
export type LogRecord = JournalEntry;

/**
 * journalctl short / short-precise and short-iso lines: stamp, host, identifier[pid], message. The host is optional
 * (`--no-hostname`, snap logs) and lazy: "ts ident[pid]: msg" is tried first, so a host is only taken when the
 * word after the stamp is not itself followed by a colon.
 */
const SHORT_LINE =
  /^([A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}(?:\.\d{1,6})?) (?:(\S+) )??([^\s[]+?)(?:\[(\d+)\])?:(?: (.*))?$/;
const ISO_LINE =
  /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?) (?:(\S+) )??([^\s[]+?)(?:\[(\d+)\])?:(?: (.*))?$/;
const PASTED_SYSTEMD =
  /^([\w:@.-]+\.(?:service|scope)): (?:Main process exited|Failed with result|State '|Scheduled restart job|Start request repeated|Deactivated successfully|Sending signal|Killing process|A process of this unit has been killed|Consumed )/;
const META_LINE = /^-- (?:Boot [0-9a-f]+|No entries|Logs begin|Journal begins|Reboot)/;
/** `journalctl -o json-seq` starts each entry with an ASCII record separator. */
const RECORD_SEPARATOR = 0x1e;
// biome-ignore lint/suspicious/noControlCharactersInRegex: ESC is what an ANSI colour sequence starts with
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

// Strip terminal colour codes (journald keeps them; they would break every pattern).
function stripAnsi(s: string): string {
  return s.includes('\x1b') ? s.replace(ANSI, '') : s;
}

// Which producer wrote the line.
function originOf(ident: string | null, pid: number | null, transport: string | null): JournalEntry['origin'] {
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
  const message =
    f.MESSAGE === null ? '[journalctl omitted this message: over 4096 bytes; export with --all]' : stripAnsi(f.MESSAGE);
  const us = f.__REALTIME_TIMESTAMP ? Number(f.__REALTIME_TIMESTAMP) : NaN;
  return {
    format: 'json',
    ts: f.__REALTIME_TIMESTAMP,
    realtimeUs: us > 0 ? us : null,
    cursor: f.__CURSOR,
    hostname: f._HOSTNAME,
    identifier: ident,
    pid: pid !== null && pid > 0 ? pid : null,
    unit: f.UNIT ?? f._SYSTEMD_UNIT,
    transport: f._TRANSPORT,
    origin: originOf(ident, pid, f._TRANSPORT),
    message,
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
  const transport = ident === 'kernel' ? 'kernel' : null;
  return {
    format: 'journal',
    ts: m[1],
    realtimeUs: null,
    cursor: null,
    hostname: m[2] ?? null,
    identifier: ident,
    pid,
    unit,
    transport,
    origin: originOf(ident, pid, null),
    message,
  };
}

// An entry of plain text (no journal fields).
function plain(
  format: LineFormat,
  identifier: string | null,
  unit: string | null,
  origin: JournalEntry['origin'],
  message: string,
): JournalEntry {
  return {
    format,
    ts: null,
    realtimeUs: null,
    cursor: null,
    hostname: null,
    identifier,
    pid: null,
    unit,
    transport: null,
    origin,
    message,
  };
}

// Parse one line; never throws, never drops: anything unrecognised is plain engine output.
export function parseLine(raw: string): JournalEntry {
  const line = raw.charCodeAt(0) === RECORD_SEPARATOR ? raw.slice(1) : raw;
  const c = line.charCodeAt(0);
  if (c === 123) {
    const r = fromJson(line);
    if (r) return r;
  } else if (c === 45 && META_LINE.test(line)) {
    return plain('meta', null, null, 'app', line);
  } else if ((c >= 65 && c <= 90) || (c >= 48 && c <= 57)) {
    const r = fromText(line);
    if (r) return r;
  }
  // A systemd line pasted without the journal prefix ("x.service: Main process exited, ...") is still systemd's.
  const unitLine = c >= 97 && c <= 122 ? PASTED_SYSTEMD.exec(line) : null;
  if (unitLine) return plain('plain', 'systemd', unitLine[1], 'systemd', stripAnsi(line));
  return plain('plain', null, null, 'app', stripAnsi(line));
}

// The entries of `journalctl -o json` output (one object per line; anything else, e.g. a truncated line, is skipped).
export function parseJournalJson(text: string): JournalEntry[] {
  const out: JournalEntry[] = [];
  for (const line of text.split('\n')) {
    if (line.charCodeAt(0) !== 123) continue;
    const e = fromJson(line);
    if (e) out.push(e);
  }
  return out;
}
