// Progress of a start through the event stream: a service:state event whenever the unit's state changes, and one
// line a minute while a start is slow, saying where it is and how long until its deadline.
import type { ServiceEventSink } from './events.js';
import type { Tracker } from './readiness.js';
import { PROGRESS_EVERY_MS, formatSlowStart, readLastSeen } from './start-deadline.js';

/** What a progress reporter needs; `deadlineMs` undefined = monitoring, no slow-start lines. */
export interface ProgressContext {
  unit: string;
  onEvent: ServiceEventSink;
  now(): number;
  deadlineMs?: number;
  everyMs?: number;
}

// A watcher's onPoll hook that turns what it saw into progress events.
export function createProgressReporter(ctx: ProgressContext): (t: Tracker) => void {
  let lastKey = '';
  let nextLineAt: number | null = null;
  const every = ctx.everyMs ?? PROGRESS_EVERY_MS;
  return (t) => {
    const s = t.state;
    const now = ctx.now();
    if (s) {
      const key = `${s.activeState}/${s.subState}/${s.mainPid}/${s.nRestarts}`;
      if (key !== lastKey)
        ctx.onEvent({
          type: 'service:state',
          ts: now,
          unit: ctx.unit,
          activeState: s.activeState,
          subState: s.subState,
          mainPid: s.mainPid,
          nRestarts: s.nRestarts,
        });
      lastKey = key;
    }
    if (ctx.deadlineMs === undefined) return;
    const startedAt = t.baseline.startedAt;
    nextLineAt ??= startedAt + every;
    if (now < nextLineAt) return;
    nextLineAt = now + every;
    const message = formatSlowStart(ctx.unit, now - startedAt, startedAt + ctx.deadlineMs - now, readLastSeen(t));
    ctx.onEvent({ type: 'log', ts: now, level: 'info', message });
  };
}
