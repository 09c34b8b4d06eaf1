// What the input could not show, and the exact commands that would show it: a fragment pasted from a docker
// tail gets a verdict, and the operator learns what to collect for a firmer one.
import type { SourceSummary } from './collector.js';
import { parseStamp } from './time.js';
import type { DiagnosisClass } from './types.js';

/** Facts about the input and the verdict that decide which gaps matter. */
export interface GapFacts {
  sources: SourceSummary[];
  kernelChecked: boolean;
  hasState: boolean;
  unit: string | null;
  verdictClass: DiagnosisClass;
  /** True when any lifetime has a start marker or a PID (process boundaries are known). */
  processMarkers: boolean;
}

/** Classes whose firmness depends on the kernel log (was it the OOM killer?). */
const KILL_CLASSES = new Set<DiagnosisClass>(['external_kill', 'host_oom_kill', 'unknown', 'clean_stop', 'crash_loop']);
/** Classes whose firmness depends on systemd's own lines (who stopped it, did the stop time out?). */
const STOP_CLASSES = new Set<DiagnosisClass>([
  'external_kill',
  'clean_stop',
  'stop_timeout',
  'unknown',
  'host_oom_kill',
]);

// "2026-03-09 22:20:00 UTC", five minutes before the first stamp, or null when the input has no absolute time.
function sinceOf(sources: SourceSummary[]): string | null {
  for (const s of sources) {
    const st = parseStamp(s.firstTs, s.yearHint);
    if (st && !st.guessedYear)
      return `${new Date(st.ms - 5 * 60_000).toISOString().slice(0, 19).replace('T', ' ')}${st.zoned ? ' UTC' : ''}`;
  }
  return null;
}

// Quote a unit name for a shell command line (unit names are [A-Za-z0-9:_.@-]; anything else gets single quotes).
function shellWord(w: string): string {
  return /^[\w:.@-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`;
}

// The gaps of an input and what to collect next.
export function findGaps(f: GapFacts): { missing: string[]; collect: string[] } {
  const lines = f.sources.reduce((n, s) => n + s.lines, 0);
  const stamped = f.sources.reduce((n, s) => n + s.stampedLines, 0);
  const systemd = f.sources.reduce((n, s) => n + s.systemdLines, 0);
  const structured = f.sources.reduce((n, s) => n + s.formats.json + s.formats.journal, 0);
  const missing: string[] = [];
  if (stamped === 0) missing.push('no timestamps: no timeline, lines are ordered by position only');
  else if (stamped < lines / 4)
    missing.push(`timestamps on ${stamped} of ${lines} lines only: the timeline is partial`);
  if (!f.processMarkers)
    missing.push('no process markers (no PID, no start line): read as one process lifetime of unknown extent');
  if (systemd === 0 && !f.hasState && STOP_CLASSES.has(f.verdictClass))
    missing.push('no systemd lines: a stop cannot be told from a crash, nor who stopped the service');
  if (!f.kernelChecked && KILL_CLASSES.has(f.verdictClass))
    missing.push('no kernel lines: an OOM kill can be neither confirmed nor ruled out');
  if (!missing.length) return { missing, collect: [] };
  const unit = shellWord(f.unit ?? 'UNIT');
  const since = sinceOf(f.sources);
  const window = since ? `--since '${since}'` : `--since '1 hour ago'`;
  const collect: string[] = [];
  if (structured === 0 || systemd === 0 || !f.processMarkers || stamped === 0)
    collect.push(`journalctl -u ${unit} -o json ${window} > journal.json`);
  if (!f.kernelChecked && KILL_CLASSES.has(f.verdictClass)) collect.push(`journalctl -k ${window} > kernel.txt`);
  if (!f.hasState && STOP_CLASSES.has(f.verdictClass)) collect.push(`systemctl show ${unit} > state.txt`);
  if (collect.length) {
    const files = [
      'journal.json',
      ...(collect.some((c) => c.includes('kernel.txt')) ? ['--kernel kernel.txt'] : []),
      ...(collect.some((c) => c.includes('state.txt')) ? ['--state state.txt'] : []),
    ];
    collect.push(`spectune diagnose ${files.join(' ')}   (or live: spectune diagnose --host HOST --unit ${unit})`);
  }
  return { missing, collect };
}
