// Start-up time from a unit's journal (pure): systemd's start line to the engine's ready line, per start.
import { readSystemdMarker } from '../diagnose/index.js';
import type { StartupReading, StartupTime } from './types.js';

/** The fields of a journal entry this needs (an entry without a time is skipped). */
export interface StartupRecord {
  realtimeUs: number | null;
  identifier: string | null;
  message: string;
}

// Measure every start in the records: a systemd "Starting"/"Started" line (or, without one, the first engine line)
// opens a start; the first line matching `readyPattern` after it closes it.
export function measureStartups(records: readonly StartupRecord[], readyPattern: RegExp): StartupReading {
  let open: number | null = null;
  let ready = true;
  let starts = 0;
  let last: StartupTime | null = null;
  let longest: StartupTime | null = null;
  for (const r of records) {
    const us = r.realtimeUs;
    if (us === null) continue;
    const isSystemd = r.identifier === 'systemd';
    const kind = isSystemd ? readSystemdMarker(r.message)?.kind : undefined;
    // "Started" opens a start only when no "Starting" line did (Type=simple units may log just "Started").
    if (kind === 'starting' || (kind === 'started' && (open === null || ready))) {
      open = us;
      ready = false;
      starts++;
      continue;
    }
    // A process that exited never became ready: the next start line opens a new start.
    if (kind === 'exit' || kind === 'stopped') {
      if (!ready) open = null;
      ready = true;
      continue;
    }
    if (isSystemd) continue;
    if (open === null) {
      open = us;
      ready = false;
      starts++;
    }
    if (!ready && readyPattern.test(r.message)) {
      ready = true;
      const t: StartupTime = {
        startUs: open,
        readyUs: us,
        seconds: Math.round((us - open) / 1e5) / 10,
        readyLine: r.message,
      };
      last = t;
      if (!longest || t.seconds > longest.seconds) longest = t;
    }
  }
  return { last, longest, starts, pending: open !== null && !ready };
}
