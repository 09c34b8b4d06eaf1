// Batches of candidates for parallel trials (pure): the sequential search is asked again and again with every
// pending candidate entered as if it had measured a little better than the one before it (an optimistic "liar"), so
// a climb keeps climbing and a grid keeps walking; a proposal already pending ends the batch (the search needs that
// result first). Real results replace the lies before the next batch, so a wrong guess costs parallel slots, not
// the winner.
import { configKey } from '../search/index.js';
import type { TrialRecord, TuneConfig } from '../tune/types.js';

/** One candidate of a batch. */
export interface BatchItem {
  config: TuneConfig;
  reason: string;
  confirmProbe: boolean;
}

/** The search as a batch needs it: the runner's propose(history). */
export type ProposeFn = (
  history: TrialRecord[],
) => { config: TuneConfig; reason: string; confirmProbe: boolean } | null;

// The objective a pending candidate is assumed to reach: the best measured so far (1 before any measurement).
function lieValue(history: readonly TrialRecord[], goal: 'maximize' | 'minimize'): number {
  const vals = history
    .filter((t) => t.status === 'ok' && t.objective !== null && t.constraintsOk !== false)
    .map((t) => t.objective as number);
  if (!vals.length) return 1;
  return goal === 'maximize' ? Math.max(...vals) : Math.min(...vals);
}

// A pending candidate as a finished record the search can read.
function liedRecord(
  index: number,
  item: BatchItem,
  objective: number,
  kind: TrialRecord['kind'] = 'search',
): TrialRecord {
  return {
    index,
    kind,
    config: item.config,
    status: 'ok',
    reason: item.reason,
    objective,
    constraintsOk: true,
    violations: [],
    runs: [],
    verdict: null,
    prediction: null,
    capacity: null,
    restarts: 0,
    startedAt: 0,
    endedAt: 0,
  };
}

/** Each pending candidate is assumed this much better than the one before it (beyond any sensible noise margin). */
export const LIE_GAIN = 0.25;

// Up to `size` distinct candidates to run at once. `baseline` (no baseline measured yet) is the first item, entered
// as measured for the proposals after it.
export function proposeBatch(
  propose: ProposeFn,
  history: readonly TrialRecord[],
  size: number,
  goal: 'maximize' | 'minimize',
  baseline: BatchItem | null = null,
): BatchItem[] {
  const out: BatchItem[] = baseline ? [baseline] : [];
  const base = lieValue(history, goal);
  const lie = (i: number) => (goal === 'maximize' ? base * (1 + LIE_GAIN) ** i : base / (1 + LIE_GAIN) ** i);
  const next = history.reduce((m, t) => Math.max(m, t.index + 1), 0);
  while (out.length < size) {
    const lies = out.map((it, i) =>
      liedRecord(next + i, it, lie(baseline && i === 0 ? 0 : i + 1), baseline && i === 0 ? 'baseline' : 'search'),
    );
    const p = propose([...history, ...lies]);
    if (!p || out.some((it) => configKey(it.config) === configKey(p.config))) break;
    out.push(p);
  }
  return out;
}
