// The service controller's progress events; the whole stream (tune/events.ts) includes them.
import type { Verdict } from '../diagnose/types.js';
import type { LogEvent, Sink } from '../events.js';

/** What deploying, restarting and watching a unit reports. `ts` is epoch milliseconds. */
export type ServiceEvent =
  | LogEvent
  | { type: 'service:action'; ts: number; host: string; unit: string; action: string; why: string }
  | { type: 'service:state'; ts: number; unit: string; activeState: string; subState: string; mainPid: number | null; nRestarts: number | null }
  | { type: 'service:ready'; ts: number; unit: string; elapsedMs: number }
  /** Waiting for in-flight requests before a stop: sent when the counts change and every DRAIN_LINE_EVERY_MS; a
   *  terminal counts down to deadlineTs by itself. `note`: what to do when live traffic keeps the engine busy. */
  | { type: 'service:drain'; ts: number; unit: string; running: number; queued: number; waitedMs: number; deadlineTs: number; note: string | null }
  | { type: 'service:failed'; ts: number; unit: string; reason: string; verdict: Verdict | null }
  | { type: 'diagnosis'; ts: number; verdict: Verdict };

/** A consumer of service events. */
export type ServiceEventSink = Sink<ServiceEvent>;
