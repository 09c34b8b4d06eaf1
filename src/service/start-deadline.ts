// The start-up deadline: a start that neither fails nor becomes ready (hung loading the model, stuck in
// `activating`, or `active (running)` while /health never answers) is given up after a while and handled like a
// failed start. Pure helpers naming what the watcher saw last, and the coded error for it.
import type { Verdict } from '../diagnose/index.js';
import { ToolError } from '../errors.js';
import type { HealthResult } from './health.js';
import type { Tracker } from './readiness.js';

/** A 100B+ model loads its weights from a cold page cache and captures CUDA graphs in ~10 min; twice that before calling a start hung. */
export const DEFAULT_READY_TIMEOUT_MS = 20 * 60_000;
/** While a start is slow, one progress line a minute says where it is. */
export const PROGRESS_EVERY_MS = 60_000;
/** Journal lines are quoted up to this length in messages. */
const MAX_LINE = 200;

/** What the watcher saw last of a start that ran out of time. */
export interface LastSeen {
  activeState: string | null;
  subState: string | null;
  mainPid: number | null;
  nRestarts: number | null;
  health: HealthResult | null;
  journalLine: string | null;
}

// The last state, health answer and journal line the watcher saw.
export function readLastSeen(t: Tracker): LastSeen {
  const s = t.state;
  const last = t.entries[t.entries.length - 1];
  return {
    activeState: s?.activeState ?? null,
    subState: s?.subState ?? null,
    mainPid: s?.mainPid ?? null,
    nRestarts: s?.nRestarts ?? null,
    health: t.lastHealth,
    journalLine: last ? last.message.slice(0, MAX_LINE) : null,
  };
}

// "activating/start, main PID 100; health http://h:30000/health -> 503; last journal line: "…"".
export function formatLastSeen(l: LastSeen): string {
  const state =
    l.activeState === null ? 'unit state never read' : `${l.activeState}/${l.subState}, main PID ${l.mainPid ?? '-'}`;
  const h = l.health;
  const health = h ? `health ${h.url} -> ${h.status ?? h.error ?? 'no answer'}` : 'health not probed';
  const line =
    l.journalLine === null ? 'no journal line since the start' : `last journal line: ${JSON.stringify(l.journalLine)}`;
  return `${state}; ${health}; ${line}`;
}

// Seconds, for messages ("1200 s").
export function formatSeconds(ms: number): string {
  return `${Math.round(ms / 1000)} s`;
}

/** The start was neither ready nor failed by its deadline; carries what was seen last. */
export class ReadyTimeoutError extends ToolError {
  readonly lastSeen: LastSeen;
  readonly timeoutMs: number;
  constructor(unit: string, timeoutMs: number, lastSeen: LastSeen) {
    super(
      'E_TIMEOUT',
      `${unit} was not ready ${formatSeconds(timeoutMs)} after its start (start-up deadline): last seen ${formatLastSeen(lastSeen)}`,
      {
        hint: 'the engine hangs while starting, or needs longer: check `spectune logs`, or raise --ready-timeout (readyTimeoutMs)',
      },
    );
    this.name = 'ReadyTimeoutError';
    this.lastSeen = lastSeen;
    this.timeoutMs = timeoutMs;
  }
}

// The verdict of a start that ran out of time: diagnosis keeps its class and evidence, the summary says it timed out.
export function asTimeoutVerdict(v: Verdict, err: ReadyTimeoutError): Verdict {
  const found = v.class === 'unknown' ? '' : ` ${v.summary}`;
  return { ...v, summary: `${err.message}.${found}` };
}

// A progress line for a slow start ("not ready after 60 s (…); deadline in 1140 s").
export function formatSlowStart(unit: string, elapsedMs: number, deadlineInMs: number, l: LastSeen): string {
  return `${unit}: not ready after ${formatSeconds(elapsedMs)} (${formatLastSeen(l)}); start-up deadline in ${formatSeconds(Math.max(0, deadlineInMs))}`;
}
