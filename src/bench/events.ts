// The benchmark's progress events; the whole stream (tune/events.ts) includes them.
import type { LogEvent, Sink } from '../events.js';
import type { BenchRun } from './types.js';

/** What a benchmark run reports while it runs. `ts` is epoch milliseconds. */
export type BenchEvent =
  | LogEvent
  | {
      type: 'bench:progress';
      ts: number;
      concurrency: number;
      done: number;
      total: number | null;
      outputTokensPerSec: number | null;
      /** Warm-up or measured requests (absent: measured); requests in flight; the longest wait for a first token so far (ms) and its limit. */
      phase?: 'warmup' | 'measure';
      inFlight?: number;
      waitingMs?: number | null;
      firstTokenTimeoutMs?: number;
    }
  | { type: 'bench:level'; ts: number; run: BenchRun }
  | { type: 'bench:stopped'; ts: number; concurrency: number; reason: string };

/** A consumer of benchmark events. */
export type BenchEventSink = Sink<BenchEvent>;
