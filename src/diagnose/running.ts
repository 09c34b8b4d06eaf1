// A process still running at the end of the input: healthy (ready or serving), still starting, or unknown.
// An operator asking "did it crash?" gets an explicit no, with the start, the ready line and the uptime.
import type { LifeState, Sighting } from './lifetimes.js';
import type { MarkerKind } from './markers.js';
import { formatStamp, parseStamp, type Stamp } from './time.js';
import type { Confidence, DiagnosisClass } from './types.js';

/** The judgement of a running lifetime, before it becomes a Death. */
export interface RunningJudgement {
  class: Extract<DiagnosisClass, 'healthy' | 'starting' | 'unknown'>;
  confidence: Confidence;
  evidence: Sighting[];
}

/** Times of a running lifetime, as the verdict's facts (ISO stamps; seconds). */
export interface RunningFacts {
  pid?: number;
  started_at?: string;
  ready_at?: string;
  ready_after_s?: number;
  last_line_at?: string;
  running_for_s?: number;
}

/** Start-up steps that show a process on its way up, in the order engines log them. */
const MILESTONES: readonly MarkerKind[] = ['engine_start', 'weights_loaded', 'kv_allocated'];
/** Milestone names in sentences. */
const MILESTONE_TEXT: Partial<Record<MarkerKind, string>> = {
  engine_start: 'engine started',
  weights_loaded: 'weights loaded',
  kv_allocated: 'KV cache allocated',
};

// The line that started this lifetime: systemd's job line, else the engine's first start-up line.
function startOf(life: LifeState): Sighting | null {
  return life.marks.starting ?? life.marks.started ?? life.marks.engine_start ?? null;
}

// The latest start-up milestone reached.
function lastMilestone(life: LifeState): { kind: MarkerKind; s: Sighting } | null {
  let best: { kind: MarkerKind; s: Sighting } | null = null;
  for (const kind of MILESTONES) {
    const s = life.marks[kind];
    if (s && (!best || s.line >= best.s.line)) best = { kind, s };
  }
  return best;
}

// Judge a lifetime with no exit at the end of the input.
export function judgeRunning(life: LifeState): RunningJudgement {
  const start = startOf(life);
  const head = start ? [start] : [];
  if (life.ready)
    return {
      class: 'healthy',
      confidence: 'high',
      evidence: [...head, life.ready, ...(life.lastRequest ? [life.lastRequest] : [])],
    };
  if (life.requests > 0)
    return { class: 'healthy', confidence: 'medium', evidence: [life.firstRequest!, life.lastRequest!] };
  const step = lastMilestone(life);
  if (start || step)
    return {
      class: 'starting',
      confidence: 'medium',
      evidence: [...head, ...(step && step.s !== start ? [step.s] : [])],
    };
  return { class: 'unknown', confidence: 'low', evidence: [] };
}

// Whole seconds between two stamps, or null.
function secondsBetween(a: Stamp | null, b: Stamp | null): number | null {
  return a && b ? Math.round((b.ms - a.ms) / 1000) : null;
}

// Facts of a running lifetime; `year` fills in yearless journald stamps (without it only durations are given).
export function runningFacts(life: LifeState, year: number | null): RunningFacts {
  const t = timesOf(life, year ?? CLOCK_ONLY_YEAR);
  const out: RunningFacts = {};
  if (life.pid !== null) out.pid = life.pid;
  const iso = (s: Stamp | null) => (s && (year !== null || !s.guessedYear) ? formatStamp(s)! : undefined);
  const [startedAt, readyAt, lastAt] = [iso(t.start), iso(t.ready), iso(t.last)];
  if (startedAt) out.started_at = startedAt;
  if (readyAt) out.ready_at = readyAt;
  const readyAfter = secondsBetween(t.start, t.ready);
  if (readyAfter !== null) out.ready_after_s = readyAfter;
  if (lastAt) out.last_line_at = lastAt;
  const runningFor = secondsBetween(t.start, t.last);
  if (runningFor !== null) out.running_for_s = runningFor;
  return out;
}

/** Stand-in year for stamps that carry none when only a clock time or a duration is needed (a leap year: Feb 29). */
const CLOCK_ONLY_YEAR = 2024;

// The stamps of a lifetime's start, ready line, first request and last line.
function timesOf(
  life: LifeState,
  year: number,
): { start: Stamp | null; ready: Stamp | null; first: Stamp | null; last: Stamp | null } {
  const stamp = (s: Sighting | null | undefined) => parseStamp(s?.ts ?? null, year);
  return {
    start: stamp(startOf(life)),
    ready: stamp(life.ready),
    first: stamp(life.firstRequest),
    last: parseStamp(life.endTs, year),
  };
}

// "09:10:00" (wall clock of the host) or "09:10:00 UTC" (journal JSON stamps are exact instants).
function clock(s: Stamp | null): string | null {
  if (!s) return null;
  return `${new Date(s.ms).toISOString().slice(11, 19)}${s.zoned ? ' UTC' : ''}`;
}

// "97 s", "12 min", "3 h 5 min".
export function formatDuration(sec: number): string {
  if (sec < 120) return `${sec} s`;
  if (sec < 7200) return `${Math.round(sec / 60)} min`;
  return `${Math.floor(sec / 3600)} h ${Math.round((sec % 3600) / 60)} min`;
}

// A sighting as "09:10:00" when it has a time, else "line 12".
function when(s: Sighting | null | undefined, stamp: Stamp | null): string {
  return clock(stamp) ?? `line ${s?.line ?? '?'}`;
}

// "since 09:10:00 (ready after 93 s)", or what the window shows of the start when it began mid-life.
function sinceText(life: LifeState, t: ReturnType<typeof timesOf>): string {
  const start = startOf(life);
  if (life.ready && start) {
    const after = secondsBetween(t.start, t.ready);
    return `since ${when(start, t.start)} (ready ${after !== null ? `after ${formatDuration(after)}` : `at ${when(life.ready, t.ready)}`})`;
  }
  if (life.ready) return `(ready at ${when(life.ready, t.ready)}; its start is before the window)`;
  return `(started before the window; serving since at least ${when(life.firstRequest, t.first)})`;
}

// The one-paragraph summary of a healthy or starting lifetime.
export function summarizeRunning(cls: 'healthy' | 'starting', life: LifeState, year: number | null): string {
  const t = timesOf(life, year ?? CLOCK_ONLY_YEAR);
  const who = life.pid !== null ? `PID ${life.pid}` : 'The process';
  const last = clock(t.last);
  const lastText = last ? `; last line at ${last}` : '';
  if (cls === 'healthy') {
    return `Service is running ${sinceText(life, t)}; no crash in the window. ${who} served ${life.requests} request${life.requests === 1 ? '' : 's'}${lastText}.`;
  }
  const start = startOf(life);
  const step = lastMilestone(life);
  const stepText =
    step && step.s !== start
      ? `; last start-up step: ${MILESTONE_TEXT[step.kind]} at ${when(step.s, parseStamp(step.s.ts, year ?? CLOCK_ONLY_YEAR))}`
      : '';
  const elapsed = secondsBetween(t.start, t.last);
  const waited = elapsed !== null ? ` (${formatDuration(elapsed)} after the start)` : '';
  return `Still starting, not ready yet: ${life.pid !== null ? who : 'the process'} started at ${start ? when(start, t.start) : `line ${life.firstLine}`}${stepText}${lastText}${waited}. No crash in the window so far.`;
}
