// The service controller's progress events; the whole stream (tune/events.ts) includes them.
import type { Verdict } from '../diagnose/index.js';
import type { LogEvent, Sink } from '../events.js';

/** Which rank of a group an event is about (set on every rank's events when a group has several). */
export interface RankTag {
  rank?: number;
  rankHost?: string;
}

/** What deploying, restarting and watching a unit reports. `ts` is epoch milliseconds. */
export type ServiceEvent =
  | LogEvent
  | ({ type: 'service:action'; ts: number; host: string; unit: string; action: string; why: string } & RankTag)
  | ({
      type: 'service:state';
      ts: number;
      unit: string;
      activeState: string;
      subState: string;
      mainPid: number | null;
      nRestarts: number | null;
    } & RankTag)
  | ({ type: 'service:ready'; ts: number; unit: string; elapsedMs: number } & RankTag)
  /** Waiting for in-flight requests before a stop: sent when the counts change and every DRAIN_LINE_EVERY_MS; a
   *  terminal counts down to deadlineTs by itself. `note`: what to do when live traffic keeps the engine busy. */
  | ({
      type: 'service:drain';
      ts: number;
      unit: string;
      running: number;
      queued: number;
      waitedMs: number;
      deadlineTs: number;
      note: string | null;
    } & RankTag)
  | ({ type: 'service:failed'; ts: number; unit: string; reason: string; verdict: Verdict | null } & RankTag)
  | { type: 'diagnosis'; ts: number; verdict: Verdict };

/** A consumer of service events. */
export type ServiceEventSink = Sink<ServiceEvent>;

// Name the rank and its host on every event of one rank's controller: service events get rank and rankHost, log
// lines start with "rank1 th2: " (group-level events, such as the group's one verdict, pass through the group's sink).
export function tagRankEvents(sink: ServiceEventSink, rank: number, host: string): ServiceEventSink {
  const prefix = `rank${rank} ${host}: `;
  return (e) => {
    if (e.type === 'log') sink(e.message.startsWith(prefix) ? e : { ...e, message: `${prefix}${e.message}` });
    else if (e.type === 'diagnosis') sink(e);
    else sink({ ...e, rank, rankHost: host });
  };
}
