// Pure handling of `journalctl -o json` output: entries, cursors, and the text form handed to diagnosis.

/** One journal record, normalised. */
export interface JournalEntry {
  cursor: string;
  /** Wall-clock time of the record on the service host, epoch microseconds. */
  realtimeUs: number;
  pid: number | null;
  identifier: string;
  hostname: string;
  message: string;
}

/** Month abbreviations of journalctl's classic `short` format. */
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

// MESSAGE arrives as a string, or as an array of bytes when it is not valid UTF-8.
function messageText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (Array.isArray(v)) return Buffer.from(v as number[]).toString('utf8');
  return v === null || v === undefined ? '' : String(v);
}

// Parse `journalctl -o json` output (one JSON object per line); malformed lines are skipped.
export function parseJournalJson(text: string): JournalEntry[] {
  const out: JournalEntry[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    let rec: Record<string, unknown>;
    try { rec = JSON.parse(line) as Record<string, unknown>; } catch { continue; }
    const pid = Number(rec._PID);
    out.push({
      cursor: String(rec.__CURSOR ?? ''),
      realtimeUs: Number(rec.__REALTIME_TIMESTAMP ?? 0),
      pid: Number.isFinite(pid) && pid > 0 ? pid : null,
      identifier: String(rec.SYSLOG_IDENTIFIER ?? rec._COMM ?? ''),
      hostname: String(rec._HOSTNAME ?? 'localhost'),
      message: messageText(rec.MESSAGE),
    });
  }
  return out;
}

// Render entries as `journalctl -o short` lines (UTC), the dialect diagnosis and operators read.
export function renderShort(entries: JournalEntry[]): string {
  return entries.map((e) => {
    const d = new Date(Math.floor(e.realtimeUs / 1000));
    const pad = (n: number) => String(n).padStart(2, '0');
    const ts = `${MONTHS[d.getUTCMonth()]} ${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
    return `${ts} ${e.hostname} ${e.identifier}${e.pid ? `[${e.pid}]` : ''}: ${e.message}\n`;
  }).join('');
}

// Whether an entry was written by systemd about the unit (rather than by the service's own processes).
export function isSystemdEntry(e: JournalEntry): boolean {
  return e.identifier === 'systemd' || e.pid === 1;
}
