// Crash loops: systemd keeps restarting a start-up that dies the same way each time, while `systemctl status`
// may well say "active (running)". Pure helpers that turn what the watcher saw into a crash_loop verdict.
import { namesNoFailure } from '../diagnose/index.js';
import type { Diagnosis, Verdict } from '../diagnose/index.js';
import type { JournalEntry } from './journal.js';
import type { Tracker } from './readiness.js';

// The journal time (epoch ms) the failure is measured from: the first fatal line, else the first record of the
// failure (systemd's "Main process exited"), else null.
export function failureTimestampMs(t: Tracker): number | null {
  const first: JournalEntry | undefined =
    t.fatal[0] ?? t.entries.find((e) => /Main process exited|Failed with result/.test(e.message));
  return first?.realtimeUs ? Math.floor(first.realtimeUs / 1000) : null;
}

// Make a diagnosis into a crash_loop verdict when the watcher saw the unit restart, keeping what each start died of.
export function asCrashLoop(d: Diagnosis, t: Tracker, looping: boolean): Diagnosis {
  if (!looping || d.verdict.class === 'crash_loop') return d;
  // A verdict that found no failure in the window (healthy, starting, clean stop) names no cause of the loop.
  const cause = namesNoFailure(d.verdict) ? null : d.verdict.class;
  const starts = Math.max(t.mainPids.length, t.restarts + 1);
  const verdict: Verdict = {
    ...d.verdict,
    class: 'crash_loop',
    cause,
    summary: `crash loop: systemd restarted the unit ${t.restarts} time(s), ${starts} starts seen; each start dies of ${cause ?? 'an unknown cause'}. ${d.verdict.summary}`,
  };
  return { ...d, verdict };
}

// A verdict for when diagnosis itself could not run (so that the caller still gets an answer).
export function fallbackVerdict(t: Tracker, reason: string, looping: boolean): Verdict {
  return {
    class: looping ? 'crash_loop' : 'unknown',
    cause: null,
    confidence: 'low',
    summary: `the start failed: ${reason}`,
    evidence: t.fatal.slice(0, 3).map((e, i) => ({ line: i + 1, text: e.message })),
    ruledOut: [],
    remediation: [],
  };
}
