// The event stream's shared vocabulary: each domain declares its own events (bench/events.ts, service/events.ts,
// tune/events.ts) over these pieces, and tune/events.ts joins them into the one SpectuneEvent union the CLI renders.

/** Phases of one tuning trial, in order. */
export type TrialPhase =
  | 'plan'
  | 'feasibility'
  | 'deploy'
  | 'restart'
  | 'wait-ready'
  | 'warmup'
  | 'bench'
  | 'record'
  | 'diagnose'
  | 'rollback'
  | 'soak';

/** A free-text progress line any domain may emit. `ts` is epoch milliseconds. */
export interface LogEvent {
  type: 'log';
  ts: number;
  level: 'info' | 'warn' | 'error';
  message: string;
}

/** A consumer of one domain's events; a sink of a wider union is also a sink of every narrower one. */
export type Sink<E> = (e: E) => void;

// A sink that drops everything, for library callers that do not care about progress (fits every Sink<E>).
export const ignoreEvents: Sink<unknown> = () => {};
