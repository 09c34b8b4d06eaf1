// Where the benefit of speculation depends on load: the best measured config at each concurrency level (by output
// tok/s, all measured trials pooled per config, constraints aside), next to the baseline's figure. Pure.
import type { BenchRun } from '../bench/types.js';
import { configKey } from './best.js';
import type { TrialRecord, TuneConfig } from './types.js';

/** The best config at one concurrency level. */
export interface ConcurrencyBest {
  concurrency: number;
  config: TuneConfig;
  /** Mean output tok/s of the config's measurements at this level. */
  outputTokensPerSec: number;
  /** Mean per-request decode tok/s at this level, when measured. */
  decodeTokensPerSec: number | null;
  /** The baseline config's output tok/s at this level, and the best's gain over it (+0.2 = 20 % more). */
  baselineOutputTokensPerSec: number | null;
  vsBaseline: number | null;
}

/** One measured trial as the ranking needs it (the campaign's TrialRecord and the report's stored trial alike). */
export interface MeasuredConfig {
  config: TuneConfig;
  runs: BenchRun[];
  /** True for the measurements of the baseline's config. */
  baseline: boolean;
}

/** A trial's level measurement, in the shape this module needs. */
interface LevelPoint {
  key: string;
  config: TuneConfig;
  run: BenchRun;
  baseline: boolean;
}

// Every level with an answered request of every measured trial (soaks included: they measure the same config).
function collectPoints(measured: MeasuredConfig[]): LevelPoint[] {
  return measured.flatMap((t) =>
    t.runs
      .filter((r) => r.requests.ok > 0)
      .map((run) => ({ key: configKey(t.config), config: t.config, run, baseline: t.baseline })),
  );
}

// Mean of numbers, or null for none.
function mean(xs: number[]): number | null {
  return xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : null;
}

// The best config per concurrency level of a campaign's trials (those that ran), in ascending order of concurrency.
export function findBestPerConcurrency(trials: TrialRecord[]): ConcurrencyBest[] {
  const baseline = trials.find((t) => t.kind === 'baseline')?.config;
  const baselineKey = baseline ? configKey(baseline) : null;
  return rankBestPerConcurrency(
    trials
      .filter((t) => t.status === 'ok')
      .map((t) => ({ config: t.config, runs: t.runs, baseline: configKey(t.config) === baselineKey })),
  );
}

// The best config per concurrency level of measured trials, in ascending order of concurrency: the one ranking the
// campaign summary and the report share.
export function rankBestPerConcurrency(measured: MeasuredConfig[]): ConcurrencyBest[] {
  const points = collectPoints(measured);
  const baselineKey = points.find((p) => p.baseline)?.key ?? null;
  const levels = [...new Set(points.map((p) => p.run.concurrency))].sort((a, b) => a - b);
  return levels.flatMap((c) => {
    const byKey = new Map<string, LevelPoint[]>();
    for (const p of points.filter((x) => x.run.concurrency === c)) byKey.set(p.key, [...(byKey.get(p.key) ?? []), p]);
    const scored = [...byKey.values()].map((ps) => ({
      config: ps[0].config,
      out: mean(ps.map((p) => p.run.outputTokensPerSec)) ?? 0,
      decode: mean(ps.flatMap((p) => (p.run.decodeTokensPerSec.mean === null ? [] : [p.run.decodeTokensPerSec.mean]))),
      key: ps[0].key,
    }));
    const best = scored.sort((a, b) => b.out - a.out)[0];
    if (!best) return [];
    const base = baselineKey ? scored.find((s) => s.key === baselineKey) : undefined;
    return [
      {
        concurrency: c,
        config: best.config,
        outputTokensPerSec: best.out,
        decodeTokensPerSec: best.decode,
        baselineOutputTokensPerSec: base?.out ?? null,
        vsBaseline: base && base.out > 0 ? best.out / base.out - 1 : null,
      },
    ];
  });
}

// One line for the campaign summary: "best by load (output tok/s): c=1 n=16 393 (+12% vs baseline), c=16 n=4 540".
export function describeBestPerConcurrency(list: ConcurrencyBest[]): string {
  if (!list.length) return '';
  const cfg = (c: TuneConfig) =>
    Object.entries(c)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ');
  const pct = (v: number | null) => (v === null ? '' : ` (${v >= 0 ? '+' : ''}${(v * 100).toFixed(1)}% vs baseline)`);
  return `best by load (output tok/s): ${list.map((b) => `c=${b.concurrency} ${cfg(b.config)} ${b.outputTokensPerSec.toFixed(1)}${pct(b.vsBaseline)}`).join('; ')}`;
}
