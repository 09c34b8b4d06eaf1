// Pure formatting of progress events into one human line each; every renderer (TTY, plain) shares it.
import type { SpectuneEvent } from '../../tune/events.js';

/** Milliseconds per second, for human durations. */
const MS_PER_S = 1000;

// Render a duration the way operators read it: "850ms", "12.3s", "4m05s".
export function formatDuration(ms: number): string {
  if (ms < MS_PER_S) return `${Math.round(ms)}ms`;
  const s = ms / MS_PER_S;
  if (s < 60) return `${s.toFixed(1)}s`;
  const m = Math.floor(s / 60);
  return `${m}m${String(Math.round(s - m * 60)).padStart(2, '0')}s`;
}

// Render a config as "k=v k=v" in key order, so lines are stable between runs.
export function formatConfig(config: Record<string, unknown>): string {
  const keys = Object.keys(config).sort();
  return keys.length === 0 ? '(as deployed)' : keys.map((k) => `${k}=${String(config[k])}`).join(' ');
}

// Round a throughput figure for display.
function formatRate(v: number | null): string {
  return v === null ? '-' : v.toFixed(1);
}

// "rank1 th2 " before the unit of a group's rank, nothing for a single unit.
function rankOf(e: { rank?: number; rankHost?: string }): string {
  return e.rank === undefined ? '' : `rank${e.rank} ${e.rankHost ?? '?'} `;
}

// Describe a service or diagnosis event; null when the event is not of that family.
function formatServiceEvent(e: SpectuneEvent): string | null {
  switch (e.type) {
    case 'service:action':
      return `service ${rankOf(e)}${e.unit}: ${e.action} (${e.why})`;
    case 'slurm:job':
      return `${e.trial === null ? '' : `trial ${e.trial}: `}slurm job ${e.jobId}${e.node ? ` on ${e.node}` : ''}: ${e.state} (${e.message})`;
    case 'service:state':
      return `service ${rankOf(e)}${e.unit}: ${e.activeState}/${e.subState} pid=${e.mainPid ?? '-'} systemd NRestarts=${e.nRestarts ?? '-'}`;
    case 'service:ready':
      return `service ${rankOf(e)}${e.unit}: ready after ${formatDuration(e.elapsedMs)}`;
    case 'service:drain':
      return formatDrain(e, e.ts);
    case 'service:failed':
      return `service ${rankOf(e)}${e.unit}: FAILED ${e.reason}${e.verdict ? ` -> ${verdictLabel(e.verdict)}` : ''}`;
    case 'diagnosis':
      return `diagnosis: ${verdictLabel(e.verdict)}: ${e.verdict.summary}`;
    default:
      return null;
  }
}

// The drain before a stop, counting down to its deadline at `now` (a terminal redraws it every second).
export function formatDrain(e: Extract<SpectuneEvent, { type: 'service:drain' }>, now: number): string {
  const s = Math.max(0, Math.ceil((e.deadlineTs - now) / MS_PER_S));
  const left = s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
  return `service ${e.unit}: draining before the stop: ${e.running} running, ${e.queued} queued; stopping anyway in ${left} (--drain-timeout)${e.note ? `; ${e.note}` : ''}`;
}

// "crash_loop/kv_cache_oom" style label of a verdict.
export function verdictLabel(v: { class: string; cause: string | null }): string {
  return v.cause ? `${v.class}/${v.cause}` : v.class;
}

// Why a per-request rate can top the total: it counts decode time only, the total counts the whole run.
function perRequestWhy(r: { outputTokensPerSec: number | null; decodeTokensPerSec: { mean: number | null } }): string {
  const per = r.decodeTokensPerSec.mean;
  return per !== null && r.outputTokensPerSec !== null && per > r.outputTokensPerSec
    ? ' (decode only: excludes time to first token and queueing, which the total includes)'
    : '';
}

// Describe a benchmark event; null when the event is not of that family.
function formatBenchEvent(e: SpectuneEvent): string | null {
  switch (e.type) {
    case 'bench:progress':
      return `bench c=${e.concurrency}: ${e.done}${e.total === null ? '' : `/${e.total}`} requests, ${formatRate(e.outputTokensPerSec)} tok/s`;
    case 'bench:level': {
      const r = e.run;
      return `bench c=${r.concurrency}: ${formatRate(r.outputTokensPerSec)} tok/s total, ${formatRate(r.decodeTokensPerSec.mean)} tok/s per request${perRequestWhy(r)}, ok=${r.requests.ok} failed=${r.requests.failed}`;
    }
    case 'bench:stopped':
      return `bench c=${e.concurrency}: stopped (${e.reason})`;
    default:
      return null;
  }
}

// Describe a campaign/trial event; null when the event is not of that family.
function formatTrialEvent(e: SpectuneEvent): string | null {
  switch (e.type) {
    case 'trial:start':
      return `trial ${e.trial}: ${formatConfig(e.config)} (${e.reason})`;
    case 'trial:phase':
      return `trial ${e.trial}: ${e.phase}${e.expectedMs === null ? '' : ` (expected ~${formatDuration(e.expectedMs)})`}`;
    case 'trial:end': {
      const obj = e.objective === null ? '' : ` objective=${e.objective.toFixed(1)}${e.unit ? ` ${e.unit}` : ''}`;
      const status = e.status === 'violates' ? `violates: ${e.violations?.join('; ') || 'constraint'}` : e.status;
      return `trial ${e.trial}: ${status}${obj}${e.verdict ? ` verdict=${verdictLabel(e.verdict)}` : ''}`;
    }
    case 'campaign:best':
      return `best so far: trial ${e.trial} ${formatConfig(e.config)} objective=${e.objective.toFixed(1)}${e.unit ? ` ${e.unit}` : ''}`;
    case 'campaign:start': {
      const store = e.store ? `, store ${e.store}` : '';
      const budget = `budget ${e.budget.maxTrials} trials, ${e.budget.maxHours} h of running time`;
      const spent = e.resumed ? `; ${e.trialsDone} trial(s) done, ${formatDuration(e.activeMs)} spent` : '';
      return `campaign ${e.campaignId} ${e.resumed ? 'resumed' : 'started'}${store}: ${budget}${spent}`;
    }
    case 'campaign:end':
      return `campaign ${e.campaignId} done: ${e.summary}`;
    default:
      return null;
  }
}

// One line for any event (no trailing newline).
export function formatEvent(e: SpectuneEvent): string {
  if (e.type === 'log') return e.level === 'info' ? e.message : `${e.level}: ${e.message}`;
  return formatTrialEvent(e) ?? formatServiceEvent(e) ?? formatBenchEvent(e) ?? e.type;
}
