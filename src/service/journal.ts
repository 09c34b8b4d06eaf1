// The unit journal as service control reads it: `journalctl -o json` parsed into the one journal model
// (diagnose's JournalEntry, every field kept), and the `journalctl -o short` text shown to operators.
import { parseJournalJson, type JournalEntry } from '../diagnose/index.js';

export { parseJournalJson, type JournalEntry };

/** Month abbreviations of journalctl's classic `short` format. */
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

// Render entries as `journalctl -o short` lines (UTC), the dialect operators read.
export function renderShort(entries: JournalEntry[]): string {
  return entries
    .map((e) => {
      const d = new Date(Math.floor((e.realtimeUs ?? 0) / 1000));
      const pad = (n: number) => String(n).padStart(2, '0');
      const ts = `${MONTHS[d.getUTCMonth()]} ${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
      return `${ts} ${e.hostname ?? 'localhost'} ${e.identifier ?? ''}${e.pid ? `[${e.pid}]` : ''}: ${e.message}\n`;
    })
    .join('');
}

// Whether an entry was written by systemd about the unit (rather than by the service's own processes).
export function isSystemdEntry(e: JournalEntry): boolean {
  return e.identifier === 'systemd' || e.pid === 1;
}
