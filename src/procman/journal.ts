// A journald-like log for the process manager: one JSON object per line, shaped like `journalctl -o json`,
// read back by unit with cursors, so the same diagnosis code reads systemd hosts and `process` services.
import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { ToolError } from '../errors.js';
import type { JournalEntry, JournalPage } from './types.js';

/** journald's LineMax= default: longer lines are cut into pieces. */
const LINE_MAX = 48 * 1024;
/** How much of the file's end is read at start-up to find the last sequence number. */
const TAIL_BYTES = 256 * 1024;

/** Fields the caller supplies; the journal adds cursor, timestamps, boot id and host name. */
export type JournalFields = Omit<
  JournalEntry,
  '__CURSOR' | '__REALTIME_TIMESTAMP' | '__MONOTONIC_TIMESTAMP' | '_BOOT_ID' | '_HOSTNAME'
>;

// Cursor "i=<seq>;o=<byte offset of the entry>": readers resume there without rescanning the file.
function parseCursor(cursor: string | null | undefined): { seq: number; offset: number } {
  if (!cursor) return { seq: 0, offset: 0 };
  const m = /^i=(\d+);o=(\d+)$/.exec(cursor);
  if (!m) throw new ToolError('E_USAGE', `invalid journal cursor ${JSON.stringify(cursor)}`);
  return { seq: Number(m[1]), offset: Number(m[2]) };
}

// Read bytes [from, end) of an open file.
function readFrom(fd: number, from: number): string {
  const size = fstatSync(fd).size;
  if (from >= size) return '';
  const buf = Buffer.alloc(size - from);
  readSync(fd, buf, 0, buf.length, from);
  return buf.toString('utf8');
}

/** The append-only JSON-lines journal file of one process manager directory. */
export class ProcJournal {
  readonly path: string;
  private readonly fd: number;
  private readonly bootId = randomUUID().replace(/-/g, '');
  private readonly host = hostname();
  private seq: number;
  private size: number;
  private closed = false;

  constructor(path: string) {
    mkdirSync(dirname(path), { recursive: true });
    this.path = path;
    this.fd = openSync(path, existsSync(path) ? 'r+' : 'w+');
    this.size = fstatSync(this.fd).size;
    this.seq = this.findLastSeq();
  }

  // Append one entry (synchronously, so entries keep the order in which things happened).
  append(fields: JournalFields): JournalEntry | null {
    if (this.closed) return null; // late output of a process after close(): dropped, never a crash
    this.seq += 1;
    const now = process.hrtime.bigint();
    const base = {
      __REALTIME_TIMESTAMP: String(BigInt(Date.now()) * 1000n),
      __MONOTONIC_TIMESTAMP: String(now / 1000n),
      _BOOT_ID: this.bootId,
      _HOSTNAME: this.host,
      ...fields,
    };
    const entry = { __CURSOR: `i=${this.seq};o=${this.size}`, ...base } as JournalEntry;
    const line = Buffer.from(`${JSON.stringify(entry)}\n`);
    writeSync(this.fd, line, 0, line.length, this.size);
    this.size += line.length;
    return entry;
  }

  // Entries of one unit (its own output and the manager's messages about it), optionally after a cursor.
  read(unit: string | null, afterCursor?: string | null): JournalPage {
    if (this.closed) throw new ToolError('E_USAGE', `journal ${this.path} is closed`);
    const after = parseCursor(afterCursor);
    const start = after.offset <= this.size ? after.offset : 0;
    const entries: JournalEntry[] = [];
    let cursor = afterCursor ?? null;
    for (const line of readFrom(this.fd, start).split('\n')) {
      if (!line) continue;
      const e = JSON.parse(line) as JournalEntry;
      if (parseCursor(e.__CURSOR).seq <= after.seq) continue;
      cursor = e.__CURSOR;
      if (unit === null || e._SYSTEMD_UNIT === unit || e.UNIT === unit) entries.push(e);
    }
    return { entries, cursor };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
  }

  private findLastSeq(): number {
    const tail = readFrom(this.fd, Math.max(0, this.size - TAIL_BYTES)).trimEnd();
    const last = tail.slice(tail.lastIndexOf('\n') + 1);
    const m = /"__CURSOR":"i=(\d+);/.exec(last);
    return m ? Number(m[1]) : 0;
  }
}

/** Splits a service's output into journal records the way journald does (journald-stream.c). */
export class LineSplitter {
  private buf = '';

  // Feed a chunk; complete lines are passed to emit.
  push(chunk: string, emit: (line: string) => void): void {
    this.buf += chunk;
    const parts = this.buf.split(/[\n\0]/);
    this.buf = parts.pop() ?? '';
    for (const p of parts) this.emitLine(p, emit);
    while (this.buf.length > LINE_MAX) {
      emit(this.buf.slice(0, LINE_MAX));
      this.buf = this.buf.slice(LINE_MAX);
    }
  }

  // The stream ended: a last line without a newline is still a record.
  flush(emit: (line: string) => void): void {
    this.emitLine(this.buf, emit);
    this.buf = '';
  }

  // Trailing whitespace is stripped and empty lines are dropped; long lines are cut at LineMax.
  private emitLine(raw: string, emit: (line: string) => void): void {
    const line = raw.trimEnd();
    for (let i = 0; i < line.length; i += LINE_MAX) emit(line.slice(i, i + LINE_MAX));
  }
}
