// How long the tuner has been running on a campaign, for the hours budget: the sum of its run spans, so a campaign
// interrupted overnight (Ctrl-C, SIGKILL, reboot) does not wake up with its budget spent. Pure.
import type { TrialRecord } from './types.js';

/** One run of the tuner: from its start (or resume) to its last sign of life, in ms since the epoch. */
export interface RunSpan {
  startedAt: number;
  lastActiveAt: number;
}

// Time a legacy run (from a store without run spans) is known to have spent: its trials' own durations. Interrupted
// trials are left out, since their end was stamped at the resume, after the interruption.
function sumTrialMs(trials: readonly TrialRecord[]): number {
  return trials
    .filter((t) => t.status !== 'discarded' && t.status !== 'running' && t.endedAt !== null)
    .reduce((s, t) => s + Math.max(0, (t.endedAt as number) - t.startedAt), 0);
}

// Active time of the earlier runs: the spans, plus the trials of runs from before spans were recorded.
export function sumActiveMs(spans: readonly RunSpan[], trials: readonly TrialRecord[] = []): number {
  const first = spans.reduce((m, s) => Math.min(m, s.startedAt), Number.POSITIVE_INFINITY);
  const legacy = sumTrialMs(trials.filter((t) => t.startedAt < first));
  return legacy + spans.reduce((s, x) => s + Math.max(0, x.lastActiveAt - x.startedAt), 0);
}
