// One typed event stream for progress; the CLI, the reports and any UI render the same events.
import type { BenchRun } from './bench/types.js';
import type { Verdict } from './diagnose/types.js';

/** Phases of one tuning trial, in order. */
export type TrialPhase =
  | 'plan' | 'feasibility' | 'deploy' | 'restart' | 'wait-ready' | 'warmup' | 'bench' | 'record' | 'diagnose' | 'rollback' | 'soak';

/** Every progress event spectune emits. `ts` is epoch milliseconds; `trial` is the 1-based trial number the summary,
 *  the store (seq) and the report use. */
export type SpectuneEvent =
  | { type: 'log'; ts: number; level: 'info' | 'warn' | 'error'; message: string }
  | { type: 'service:action'; ts: number; host: string; unit: string; action: string; why: string }
  | { type: 'service:state'; ts: number; unit: string; activeState: string; subState: string; mainPid: number | null; nRestarts: number | null }
  | { type: 'service:ready'; ts: number; unit: string; elapsedMs: number }
  | { type: 'service:failed'; ts: number; unit: string; reason: string; verdict: Verdict | null }
  | {
    type: 'bench:progress'; ts: number; concurrency: number; done: number; total: number | null; outputTokensPerSec: number | null;
    /** Warm-up or measured requests (absent: measured); requests in flight; the longest wait for a first token so far (ms) and its limit. */
    phase?: 'warmup' | 'measure'; inFlight?: number; waitingMs?: number | null; firstTokenTimeoutMs?: number;
  }
  | { type: 'bench:level'; ts: number; run: BenchRun }
  | { type: 'bench:stopped'; ts: number; concurrency: number; reason: string }
  | { type: 'diagnosis'; ts: number; verdict: Verdict }
  | { type: 'trial:start'; ts: number; campaignId: number; trial: number; config: Record<string, unknown>; reason: string }
  | { type: 'trial:phase'; ts: number; trial: number; phase: TrialPhase; expectedMs: number | null }
  | {
    type: 'trial:end'; ts: number; trial: number; status: 'ok' | 'violates' | 'failed' | 'skipped' | 'infeasible'; objective: number | null; verdict: Verdict | null;
    /** The constraints a measured trial broke (status 'violates'), as the report words them. */
    violations?: string[];
  }
  | { type: 'campaign:best'; ts: number; trial: number; config: Record<string, unknown>; objective: number }
  /** A Slurm trial job changed: submitted, running on a node, ending, ended (with its final state). */
  | { type: 'slurm:job'; ts: number; trial: number | null; jobId: string; node: string | null; state: string; message: string }
  | { type: 'campaign:end'; ts: number; campaignId: number; bestConfig: Record<string, unknown> | null; summary: string };

/** A consumer of events. */
export type EventSink = (e: SpectuneEvent) => void;

// A sink that drops everything, for library callers that do not care about progress.
export const ignoreEvents: EventSink = () => {};
