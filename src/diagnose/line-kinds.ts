// How the collector sorts a line before the rules see it: routine output that no rule can match, error words worth
// showing when nothing matched, and evidence quotes bounded for 1 MB lines.
import { detach } from './detach.js';
import { BATCH_PREFIXES, REQUEST_LOG_PREFIXES } from './markers.js';
import type { AppLine } from './prefix.js';

/** Suspicious lines (shown when nothing matched): error words that are not part of routine output. */
export const SUSPICIOUS =
  /\b(?:[A-Z]\w*Error|ERROR|Exception|FATAL|Fatal|fatal|Traceback|Segmentation fault|Aborted|core dumped|panic|failed|Failed|killed|Killed)\b/;
/** Text kept per evidence line: enough to quote, bounded for 1 MB lines. */
const MAX_QUOTE = 2000;

// Bare text of a systemd/kernel message (no engine prefix to strip).
export function bare(text: string): AppLine {
  return { text, prefixed: false, tag: null, appTs: null, dialect: null, head: '' };
}

/** Fixed-format lines a busy server prints by the million (batch stats, access log): no rule can match them. */
const ROUTINE_PREFIXES = [...BATCH_PREFIXES, 'Engine 0', 'slot '];
const ACCESS_LINE = /^INFO: +[\w.:[\]-]+ - "/;

// Is this one of the routine lines that can be skipped by the rules (the markers have already seen it)?
export function isRoutine(text: string): boolean {
  for (const p of ROUTINE_PREFIXES) if (text.startsWith(p)) return !text.includes('rror');
  for (const p of REQUEST_LOG_PREFIXES) if (text.startsWith(p)) return true;
  return text.charCodeAt(0) === 73 && ACCESS_LINE.test(text);
}

// Quote a line for evidence, bounded.
export function quote(text: string): string {
  return text.length > MAX_QUOTE ? `${text.slice(0, MAX_QUOTE)}… [${text.length} chars]` : detach(text);
}
