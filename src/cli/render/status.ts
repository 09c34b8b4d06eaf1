// Pure state behind the live status line: current trial, phase, elapsed vs expected, best so far.
import type { SpectuneEvent } from '../../tune/events.js';
import { formatConfig, formatDrain, formatDuration } from './format.js';
import { createProgress, describeBudget, describeLevel, updateProgress, type CampaignProgress } from './progress.js';

/** What the live line shows; updated by every event. */
export interface LiveStatus {
  trial: number | null;
  config: string;
  phase: string | null;
  phaseStartTs: number | null;
  expectedMs: number | null;
  best: string | null;
  bench: string | null;
  /** The drain before a stop, counted down at render time. */
  drain: Extract<SpectuneEvent, { type: 'service:drain' }> | null;
  /** Requests done per level, ETA and budget left. */
  progress: CampaignProgress;
}

// The status before any event.
export function createLiveStatus(): LiveStatus {
  return {
    trial: null,
    config: '',
    phase: null,
    phaseStartTs: null,
    expectedMs: null,
    best: null,
    bench: null,
    drain: null,
    progress: createProgress(),
  };
}

// Fold one event into the status (returns a new object; the input is not changed).
export function updateLiveStatus(prev: LiveStatus, e: SpectuneEvent): LiveStatus {
  const s = { ...prev, progress: updateProgress(prev.progress, e) };
  switch (e.type) {
    case 'trial:start':
      return {
        ...s,
        trial: e.trial,
        config: formatConfig(e.config),
        phase: 'plan',
        phaseStartTs: e.ts,
        expectedMs: null,
        bench: null,
      };
    case 'trial:phase':
      return { ...s, trial: e.trial, phase: e.phase, phaseStartTs: e.ts, expectedMs: e.expectedMs, bench: null };
    case 'bench:progress':
      return { ...s, bench: `c=${e.concurrency} ${e.done}${e.total === null ? '' : `/${e.total}`}` };
    case 'campaign:best':
      return { ...s, best: `${e.objective.toFixed(1)}${e.unit ? ` ${e.unit}` : ''} (${formatConfig(e.config)})` };
    case 'campaign:end':
      return { ...s, trial: null, phase: null, drain: null };
    case 'service:drain':
      return { ...s, drain: e };
    case 'service:action':
    case 'service:state':
    case 'service:ready':
    case 'service:failed':
      return s.drain ? { ...s, drain: null } : s;
    default:
      return s;
  }
}

// Render the status as one line at time `now`, or null when nothing is in progress.
export function renderLiveStatus(s: LiveStatus, now: number): string | null {
  const drain = s.drain ? formatDrain(s.drain, now) : null;
  if (s.trial === null || s.phase === null) return drain;
  const elapsed = s.phaseStartTs === null ? 0 : now - s.phaseStartTs;
  const expected = s.expectedMs === null ? '' : ` / ~${formatDuration(s.expectedMs)}`;
  const level = s.bench ? describeLevel(s.progress, now) : null;
  const bench = level ? ` ${level}` : s.bench ? ` ${s.bench}` : '';
  const best = s.best ? ` | best ${s.best}` : '';
  const budget = describeBudget(s.progress, now);
  return `trial ${s.trial} ${s.config} [${s.phase} ${formatDuration(elapsed)}${expected}${bench}]${best}${drain ? ` | ${drain}` : ''}${budget ? ` | ${budget}` : ''}`;
}
