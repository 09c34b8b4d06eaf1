// The end of a campaign in a few lines fit for a team chat: winner vs baseline with %, trials, restarts, failures
// with their verdicts, time (pure).
import type { CampaignResult } from '../../tune/result.js';
import { RESTARTS_COUNTED, trialNumber } from '../../tune/types.js';
import { formatConfig, formatDuration, verdictLabel } from './format.js';

/** Failures named one by one at most; the rest are counted. */
const FAILURES_NAMED = 3;

// "+18.5 %" of a against b (null without both).
function percent(a: number | null, b: number | null): string | null {
  if (a === null || b === null || b === 0) return null;
  const p = (a / b - 1) * 100;
  return `${p >= 0 ? '+' : ''}${p.toFixed(1)} %`;
}

// The chat summary's lines (no trailing newline).
export function formatChatSummary(c: CampaignResult): string {
  const unit = c.objectiveUnit ? ` ${c.objectiveUnit}` : '';
  const fig = (v: number | null) => (v === null ? '-' : `${v.toFixed(1)}${unit}`);
  const head = `campaign ${c.campaignId} (spectune${c.status === 'done' ? '' : `, ${c.status}`}):`;
  const base = c.baseline
    ? `baseline ${formatConfig(c.baseline.config)} ${fig(c.baseline.objective)}`
    : 'no baseline measured';
  const pct = percent(c.best?.objective ?? null, c.baseline?.objective ?? null);
  const winner = c.best
    ? `winner ${formatConfig(c.best.config)} ${fig(c.best.objective)}${pct ? ` (${pct} vs baseline)` : ''}`
    : 'no winner';
  const count = (s: string) => c.trials.filter((t) => t.status === s).length;
  const ts = c.trials.flatMap((t) => [t.startedAt, t.endedAt ?? t.startedAt]);
  const took = ts.length ? `, ${formatDuration(Math.max(...ts) - Math.min(...ts))}` : '';
  const totals = `${c.trials.length} trials (${count('ok')} measured, ${count('failed')} failed, ${count('infeasible')} refused, ${count('discarded')} skipped), ${c.restarts} restarts (${RESTARTS_COUNTED})${took}`;
  const failed = c.trials.filter((t) => t.status === 'failed');
  const named = failed
    .slice(0, FAILURES_NAMED)
    .map(
      (t) =>
        `trial ${trialNumber(t.index)} ${formatConfig(t.config)}: ${t.verdict ? verdictLabel(t.verdict) : (t.violations[0] ?? 'failed')}`,
    );
  const more = failed.length > FAILURES_NAMED ? ` (+${failed.length - FAILURES_NAMED} more)` : '';
  return [
    `${head} ${winner}; ${base}`,
    totals,
    failed.length ? `failures: ${named.join('; ')}${more}` : 'failures: none',
  ].join('\n');
}
