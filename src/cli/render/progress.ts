// Pure progress of a campaign as the renderers show it: requests done/total per level with an ETA, and the budget
// left (trials and running time), folded from the event stream.
import type { SpectuneEvent } from '../../tune/events.js';
import { formatDuration } from './format.js';

/** What the progress line needs to remember. */
export interface CampaignProgress {
  budget: { maxTrials: number; maxMs: number } | null;
  /** Trials that ended (before this run, and in it). */
  trialsDone: number;
  /** Running time spent before this run, and when this run started. */
  activeBeforeMs: number;
  runStartTs: number | null;
  /** The benchmark level in progress: its concurrency, when it began, requests done of total. */
  level: { concurrency: number; startTs: number; done: number; total: number | null } | null;
  /** When the last level (or the benchmark phase) began or moved on: the start of the next level. */
  markTs: number | null;
}

/** Milliseconds per hour, for the hours budget. */
const MS_PER_HOUR = 3_600_000;

// The progress before any event.
export function createProgress(): CampaignProgress {
  return { budget: null, trialsDone: 0, activeBeforeMs: 0, runStartTs: null, level: null, markTs: null };
}

// Fold one event into the progress (a new object).
export function updateProgress(p: CampaignProgress, e: SpectuneEvent): CampaignProgress {
  switch (e.type) {
    case 'campaign:start':
      return {
        ...p,
        budget: { maxTrials: e.budget.maxTrials, maxMs: e.budget.maxHours * MS_PER_HOUR },
        trialsDone: e.trialsDone,
        activeBeforeMs: e.activeMs,
        runStartTs: e.ts,
      };
    case 'trial:end':
      return e.status === 'skipped' ? { ...p, level: null } : { ...p, trialsDone: p.trialsDone + 1, level: null };
    case 'trial:phase':
      return { ...p, level: null, markTs: e.ts };
    case 'bench:progress': {
      const same = p.level && p.level.concurrency === e.concurrency;
      return {
        ...p,
        markTs: e.ts,
        level: {
          concurrency: e.concurrency,
          startTs: same ? p.level!.startTs : (p.markTs ?? e.ts),
          done: e.done,
          total: e.total,
        },
      };
    }
    default:
      return p;
  }
}

// "c=16 12/48 requests, ETA 35s" (no ETA before the first request is done, or without a total).
export function describeLevel(p: CampaignProgress, now: number): string | null {
  const l = p.level;
  if (!l) return null;
  const total = l.total === null ? '' : `/${l.total}`;
  const rate = l.done > 0 ? (now - l.startTs) / l.done : null;
  const eta =
    rate !== null && l.total !== null && l.total > l.done ? `, ETA ${formatDuration(rate * (l.total - l.done))}` : '';
  return `c=${l.concurrency} ${l.done}${total} requests${eta}`;
}

// "budget left: 9 trials, 52m10s" (null before the campaign's start event).
export function describeBudget(p: CampaignProgress, now: number): string | null {
  if (!p.budget || p.runStartTs === null) return null;
  const trials = Math.max(0, p.budget.maxTrials - p.trialsDone);
  const time = Math.max(0, p.budget.maxMs - p.activeBeforeMs - (now - p.runStartTs));
  return `budget left: ${trials} trial${trials === 1 ? '' : 's'}, ${formatDuration(time)}`;
}

// The whole progress line: level, ETA and budget.
export function describeProgress(p: CampaignProgress, now: number): string {
  return [describeLevel(p, now), describeBudget(p, now)].filter((x) => x !== null).join(' | ');
}
