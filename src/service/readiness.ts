// Readiness with early failure: ready = the engine's ready line in the journal AND its health endpoint answers
// 200; failed as soon as the unit leaves activating/active, its main PID changes, NRestarts grows or a fatal line
// appears. The journal is followed by cursor every few hundred ms; a start that does neither by its deadline
// (deadlineMs after it began) ends as "timeout".
import type { Host } from '../host/types.js';
import type { HealthResult } from './health.js';
import type { JournalEntry } from './journal.js';
import { isStartingOrUp, type UnitState } from './show.js';
import { readJournalAfter, showUnit } from './systemd.js';

/** Pause between polls: a poll itself costs two commands over the shared SSH connection, so a fatal line is seen within ~0.5 s. */
export const POLL_MS = 250;
/** After the first failure signal, watch this long for the restart that makes it a crash loop (RestartSec is often 1-5 s). */
export const CONFIRM_WINDOW_MS = 3000;

/** The unit as it was right after spectune (re)started it. */
export interface Baseline {
  mainPid: number | null;
  nRestarts: number | null;
  /** Journal cursor taken before the start: everything after it belongs to this start. */
  cursor: string | null;
  /** Local time of the start, epoch ms. */
  startedAt: number;
  /** Service host clock minus local clock (ms), for comparing journal times with local times. */
  clockOffsetMs: number;
  /** False when spectune did not make the start itself: its ready line may predate the cursor, so health alone decides. */
  sawStart: boolean;
}

/** Everything the watcher has seen so far (pure state, updated by `observe`). */
export interface Tracker {
  baseline: Baseline;
  cursor: string | null;
  entries: JournalEntry[];
  fatal: JournalEntry[];
  readyLine: JournalEntry | null;
  mainPids: number[];
  restarts: number;
  state: UnitState | null;
  /** Local time (ms) of the first failure signal, and what it was. */
  failedAt: number | null;
  reason: string | null;
  /** The last health answer (null until the engine was probed). */
  lastHealth: HealthResult | null;
}

/** What the watcher concluded. */
export type WatchOutcome =
  | { status: 'ready'; elapsedMs: number; tracker: Tracker }
  | { status: 'stable'; tracker: Tracker }
  | { status: 'failed'; reason: string; looping: boolean; tracker: Tracker }
  | { status: 'timeout'; elapsedMs: number; tracker: Tracker };

/** How the watcher reaches the unit and the engine. */
export interface WatchContext {
  host: Host;
  unit: string;
  healthUrl: string;
  readyPattern: RegExp;
  isFatal(message: string): boolean;
  health(url: string): Promise<HealthResult>;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  now(): number;
  pollMs?: number;
  confirmWindowMs?: number;
  /** Monitor a running unit for this long instead of waiting for readiness ("stable" when nothing failed). */
  monitorMs?: number;
  /** Give up on a start that is neither ready nor failed this long after it began ("timeout"; not in monitor mode). */
  deadlineMs?: number;
  /** Called after every poll (progress events). */
  onPoll?(t: Tracker): void;
}

// A fresh tracker for one start.
export function createTracker(baseline: Baseline): Tracker {
  return {
    baseline,
    cursor: baseline.cursor,
    entries: [],
    fatal: [],
    readyLine: null,
    mainPids: baseline.mainPid ? [baseline.mainPid] : [],
    restarts: 0,
    state: null,
    failedAt: null,
    reason: null,
    lastHealth: null,
  };
}

// Fold one poll (new journal records and the unit state) into the tracker, noting the first failure signal.
export function observe(
  t: Tracker,
  entries: JournalEntry[],
  state: UnitState,
  isFatal: (m: string) => boolean,
  readyPattern: RegExp,
  now: number,
): void {
  t.entries.push(...entries);
  if (entries.length) t.cursor = entries[entries.length - 1].cursor || t.cursor;
  for (const e of entries) {
    if (isFatal(e.message)) t.fatal.push(e);
    else if (!t.readyLine && readyPattern.test(e.message)) t.readyLine = e;
  }
  if (state.mainPid && !t.mainPids.includes(state.mainPid)) t.mainPids.push(state.mainPid);
  t.restarts = Math.max(t.restarts, (state.nRestarts ?? 0) - (t.baseline.nRestarts ?? 0));
  t.state = state;
  const reason = failureSignal(t, state);
  if (reason && t.failedAt === null) {
    t.failedAt = now;
    t.reason = reason;
  }
}

// The first reason to call this start failed, or null.
function failureSignal(t: Tracker, s: UnitState): string | null {
  if (t.fatal.length) return `fatal line: ${t.fatal[0].message.slice(0, 200)}`;
  if (t.restarts > 0) return `systemd restarted the unit (NRestarts +${t.restarts})`;
  if (t.mainPids.length > 1) return `main PID changed (${t.mainPids.join(' -> ')})`;
  if (!isStartingOrUp(s))
    return `unit is ${s.activeState}/${s.subState}${s.result && s.result !== 'success' ? ` (result ${s.result})` : ''}`;
  return null;
}

// Whether a failed start has become a loop: it restarted (new PID or NRestarts) after dying.
export function isLooping(t: Tracker): boolean {
  return t.restarts > 0 || t.mainPids.length > 1;
}

// Decide after a poll: keep waiting, probe health, call a monitored unit stable, or conclude the failure.
export function decide(
  t: Tracker,
  now: number,
  confirmWindowMs: number,
  monitorUntil?: number,
): 'wait' | 'probe' | 'stable' | 'failed' {
  if (t.failedAt === null && monitorUntil !== undefined) return now >= monitorUntil ? 'stable' : 'wait';
  if (t.failedAt === null)
    return (t.readyLine || !t.baseline.sawStart) && t.state?.activeState === 'active' ? 'probe' : 'wait';
  if (isLooping(t) && t.fatal.length) return 'failed';
  const s = t.state;
  const restartComing =
    s !== null && (s.subState === 'auto-restart' || (s.restart !== 'no' && s.restart !== '' && isStartingOrUp(s)));
  if (!restartComing && s !== null && !isStartingOrUp(s)) return 'failed';
  return now - t.failedAt >= confirmWindowMs ? 'failed' : 'wait';
}

// One poll: journal after the cursor and the unit state, in parallel.
async function poll(ctx: WatchContext, t: Tracker): Promise<void> {
  const [entries, state] = await Promise.all([
    readJournalAfter(ctx.host, ctx.unit, t.cursor),
    showUnit(ctx.host, ctx.unit),
  ]);
  observe(t, entries, state, ctx.isFatal, ctx.readyPattern, ctx.now());
}

// Follow a start until it is ready, has failed or has run out of time (or, with monitorMs, watch a running unit
// for a crash loop); when the caller aborts it throws the abort reason.
export async function watchStart(ctx: WatchContext, baseline: Baseline, signal?: AbortSignal): Promise<WatchOutcome> {
  const t = createTracker(baseline);
  const monitorUntil = ctx.monitorMs === undefined ? undefined : baseline.startedAt + ctx.monitorMs;
  const deadline =
    ctx.monitorMs === undefined && ctx.deadlineMs !== undefined ? baseline.startedAt + ctx.deadlineMs : undefined;
  for (;;) {
    signal?.throwIfAborted();
    await poll(ctx, t);
    ctx.onPoll?.(t);
    const next = decide(t, ctx.now(), ctx.confirmWindowMs ?? CONFIRM_WINDOW_MS, monitorUntil);
    if (next === 'stable') return { status: 'stable', tracker: t };
    if (next === 'failed') return { status: 'failed', reason: t.reason ?? 'failed', looping: isLooping(t), tracker: t };
    if (next === 'probe' && (t.lastHealth = await ctx.health(ctx.healthUrl)).ok) {
      return { status: 'ready', elapsedMs: ctx.now() - baseline.startedAt, tracker: t };
    }
    // A failure being confirmed (t.failedAt set) is left to finish: it ends within the confirm window.
    const left = deadline === undefined || t.failedAt !== null ? Infinity : deadline - ctx.now();
    if (left <= 0) return timeOut(ctx, t, next === 'probe');
    await ctx.sleep(Math.min(ctx.pollMs ?? POLL_MS, left), signal);
  }
}

// The "timeout" outcome, with a health answer for the record when the watcher had no reason to probe yet.
async function timeOut(ctx: WatchContext, t: Tracker, probed: boolean): Promise<WatchOutcome> {
  if (!probed) t.lastHealth = await ctx.health(ctx.healthUrl);
  return { status: 'timeout', elapsedMs: ctx.now() - t.baseline.startedAt, tracker: t };
}
