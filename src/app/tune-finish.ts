// The end state of a campaign: deploy the winner (or restore the original), verify it healthy, print the drop-in.
import { findBest, configKey } from '../tune/best.js';
import { describeBestPerConcurrency, findBestPerConcurrency } from '../tune/per-concurrency.js';
import { metricUnit } from '../tune/objective.js';
import { findDisqualified } from '../tune/step.js';
import { RESTARTS_COUNTED, type NextStep, type TrialRecord, type TuneConfig } from '../tune/types.js';
import type { CampaignResult } from '../tune/result.js';
import type { TrialContext } from './trial.js';

export type { CampaignResult } from '../tune/result.js';

// Count the service restarts the campaign spent.
export function countRestarts(trials: TrialRecord[]): number {
  return trials.reduce((s, t) => s + t.restarts, 0);
}

// The config the service runs now: that of the last trial that ended ready (or the baseline's).
export function findConfigInForce(trials: TrialRecord[]): TuneConfig | null {
  const ready = trials.filter((t) => t.status === 'ok').sort((a, b) => a.index - b.index);
  return ready.length ? ready[ready.length - 1].config : null;
}

// One-line summary of a finished campaign (with why a lower-measured config won, when it did).
function summarize(
  best: TrialRecord | null,
  baseline: TrialRecord | null,
  restarts: number,
  trials: number,
  why: string,
  note: string | null,
  unit: string,
): string {
  if (!best || best.objective === null) return `${why}; no winner; ${restarts} restarts (${RESTARTS_COUNTED})`;
  const gain = baseline?.objective
    ? ` (${((best.objective / baseline.objective - 1) * 100).toFixed(1)}% vs baseline)`
    : '';
  const cfg = Object.entries(best.config)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  return `${why}; best ${cfg}: ${best.objective.toFixed(1)}${unit ? ` ${unit}` : ''}${gain}${note ? ` — ${note}` : ''}; ${trials} trials, ${restarts} restarts (${RESTARTS_COUNTED})`;
}

// Put the service on `target` unless it is already there; a failed final deploy falls back to the last good config.
async function deployFinal(
  ctx: TrialContext,
  trials: TrialRecord[],
  target: TuneConfig,
  why: string,
): Promise<{ ok: boolean; restarts: number }> {
  const inForce = findConfigInForce(trials);
  if (inForce && configKey(inForce) === configKey(target)) return { ok: true, restarts: 0 };
  const out = await ctx.deps.service.deploy(target, why, ctx.signal);
  if (out.ready) {
    await ctx.deps.service.markGood();
    return { ok: true, restarts: out.restarts };
  }
  await ctx.deps.service.recover(`final deploy failed: ${out.reason}`);
  return { ok: false, restarts: out.restarts + 1 };
}

// Finish: end state, verified healthy, recorded, announced.
export async function finishCampaign(
  ctx: TrialContext,
  trials: TrialRecord[],
  step: Extract<NextStep, { kind: 'finish' }>,
  restore: boolean,
): Promise<CampaignResult> {
  const { deps, onEvent, campaignId, spec } = ctx;
  const baseline = trials.find((t) => t.kind === 'baseline' && t.status === 'ok') ?? null;
  const winner = step.best
    ? null
    : findBest(
        trials,
        { goal: spec.objective.goal, noiseMargin: spec.noiseMargin },
        findDisqualified(trials, spec.objective.goal),
      );
  const best = step.best ?? (winner ? winner.trials[winner.trials.length - 1] : null);
  const winnerNote = step.best ? step.winnerNote : (winner?.why ?? null);
  // No winner (every config failed or broke a constraint): back to the operator's config, not the last one tried.
  const target = restore || !best ? baseline?.config : best.config;
  const why = restore
    ? 'restore the original config (--restore)'
    : best
      ? 'deploy the campaign winner'
      : 'no winner: restore the original config';
  const landing = target ? await deployFinal(ctx, trials, target, why) : { ok: true, restarts: 0 };
  const health = await deps.service.waitHealthy(ctx.signal);
  if (!health.healthy) await deps.service.recover(`end state not healthy: ${health.reason}`);
  const deployed = await deps.service.describeDeployed();
  const restarts = countRestarts(trials) + landing.restarts;
  const perLevel = findBestPerConcurrency(trials);
  const byLoad = perLevel.length > 1 ? `; ${describeBestPerConcurrency(perLevel)}` : '';
  const summary =
    (spec.simulated ? 'SIMULATED engine: ' : '') +
    summarize(best, baseline, restarts, trials.length, step.why, winnerNote, metricUnit(spec.objective.metric)) +
    (landing.ok ? '' : '; the winner failed to redeploy, the service is on the last good config') +
    byLoad;
  // The report's "what is running now"; a host that cannot be read now must not lose the campaign's result.
  const endState = deps.service.readEndState ? await deps.service.readEndState(spec.keys).catch(() => null) : null;
  deps.store.finishCampaign(campaignId, { bestTrial: best?.index ?? null, summary, now: deps.now(), endState });
  onEvent({ type: 'campaign:end', ts: deps.now(), campaignId, bestConfig: best?.config ?? null, summary });
  return {
    campaignId,
    status: best ? 'done' : 'no-winner',
    best,
    baseline,
    trials,
    deployed,
    restarts,
    winnerNote,
    bestPerConcurrency: perLevel,
    summary,
    objectiveUnit: metricUnit(spec.objective.metric),
  };
}
