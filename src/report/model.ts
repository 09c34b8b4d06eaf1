// Build the report model from loaded store data: table rows, charts, timeline and diagnoses. Pure.
import type { BenchRun } from '../bench/types.js';
import { orderRanks } from '../config/ranks.js';
import type { CapacityFacts, ParamValue } from '../engines/types.js';
import { RESTARTS_COUNTED } from '../tune/types.js';
import { buildKeep, buildRunning } from './end-state.js';
import { buildLevelBests } from './per-concurrency.js';
import { formatConfig, formatNumber, formatPercent } from './format.js';
import { buildLatency, buildLevelCharts, buildTrialChart, labelMetric } from './series.js';
import type {
  ChartModel,
  FailureModel,
  ReportInput,
  ReportModel,
  ReportTrial,
  TargetModel,
  TimelineEntry,
  TrialRow,
} from './types.js';

// The objective when the stored config does not say (spectune's default objective).
const DEFAULT_OBJECTIVE = { metric: 'decodeTokensPerSec.p50', concurrency: 1, goal: 'maximize' as const };
// A diagnosis shows at most this many evidence lines; the rest is in `spectune logs`.
export const MAX_EVIDENCE_LINES = 12;
// States in which the service was (re)started for the trial.
const DEPLOYED = new Set(['measured', 'failed']);

// The engine command of spectune's simulator ("node .../spectune.js sim ..."), and the demo's unit.
const SIM_COMMAND = /(^|[\s/])spectune(\.m?js)?\s+sim(\s|$)/;
const DEMO_UNIT_NAME = /(^|:)spectune-demo-sim\.service$/;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);

// The objective from the stored config snapshot (SpectuneConfig or the tuner's spec).
function readObjective(config: Obj): ReportModel['objective'] {
  const o = isObj(config.objective) ? config.objective : {};
  return {
    metric: typeof o.metric === 'string' ? o.metric : DEFAULT_OBJECTIVE.metric,
    concurrency: typeof o.concurrency === 'number' ? o.concurrency : DEFAULT_OBJECTIVE.concurrency,
    goal: o.goal === 'minimize' ? 'minimize' : 'maximize',
  };
}

// The tuned keys: the spec's `keys`, the config's `space`, else every key any trial set.
function readKeys(config: Obj, trials: ReportTrial[]): string[] {
  if (Array.isArray(config.keys) && config.keys.every((k) => typeof k === 'string')) return config.keys as string[];
  if (Array.isArray(config.space)) return config.space.filter(isObj).map((d) => String(d.key));
  if (isObj(config.space)) return Object.keys(config.space);
  return [...new Set(trials.flatMap((t) => Object.keys(t.params)))];
}

// The search's own step names, which the tuner keeps as the prefix of a search trial's reason.
const STEP_NAMES = /^(baseline|climb|refine|probe|bisect|repeat|soak|grid|random):/;

// What the trial was for: the search step ("climb", "probe", "bisect", ...) when the reason names one.
function purposeOf(t: ReportTrial): string {
  const m = t.purpose === 'search' ? STEP_NAMES.exec(t.reason) : null;
  return m ? m[1] : t.purpose;
}

// Short verdict of a trial for the table, flagging a wrong memory prediction.
function verdictOf(t: ReportTrial): string {
  const v = baseVerdict(t);
  return t.predictionWrong ? `${v}; memory prediction was wrong` : v;
}

// The verdict proper.
function baseVerdict(t: ReportTrial): string {
  const v = t.verdicts[0];
  if (v) return v.cause ? `${v.class} (${v.cause})` : v.class;
  if (t.state === 'infeasible') return 'predicted OOM (not deployed)';
  if (t.state === 'measured')
    return t.constraintsOk === false ? `violates: ${t.constraintNotes.join('; ') || 'constraint'}` : 'ok';
  if (t.state === 'skipped') return t.error ?? 'skipped';
  return t.error ?? t.state;
}

// The acceptance length at the objective's level, else the first level that has one.
function acceptOf(runs: BenchRun[], concurrency: number): number | null {
  return (
    runs.find((r) => r.concurrency === concurrency)?.acceptLength ??
    runs.find((r) => r.acceptLength !== null)?.acceptLength ??
    null
  );
}

// The signed relative change of an objective against the baseline (positive = better).
function relative(v: number | null, base: number | null, goal: 'maximize' | 'minimize'): number | null {
  if (v === null || base === null || base === 0) return null;
  const r = (v - base) / Math.abs(base);
  return goal === 'maximize' ? r : -r;
}

// Pick the best trial: the campaign's, else the best usable measured search/baseline trial of a config that never
// broke a constraint (a soak that breaks one disqualifies the config, as in the tuner).
function findBest(input: ReportInput, goal: 'maximize' | 'minimize'): ReportTrial | null {
  const c = input.campaign;
  const stored = input.trials.find(
    (t) => (c.bestTrialId != null && t.id === c.bestTrialId) || (c.bestSeq != null && t.seq === c.bestSeq),
  );
  if (stored) return stored;
  const broken = new Set(input.trials.filter((t) => t.constraintsOk === false).map((t) => JSON.stringify(t.params)));
  const usable = input.trials.filter(
    (t) =>
      t.state === 'measured' &&
      t.objective !== null &&
      t.constraintsOk !== false &&
      t.purpose !== 'soak' &&
      !broken.has(JSON.stringify(t.params)),
  );
  return usable.reduce<ReportTrial | null>(
    (b, t) => (!b || (goal === 'maximize' ? t.objective! > b.objective! : t.objective! < b.objective!) ? t : b),
    null,
  );
}

// Table rows for every trial.
function buildRows(
  input: ReportInput,
  keys: string[],
  levels: number[],
  objective: ReportModel['objective'],
): TrialRow[] {
  const base = input.trials.find((t) => t.purpose.startsWith('baseline') && t.state === 'measured') ?? null;
  const best = findBest(input, objective.goal);
  return input.trials.map((t) => ({
    seq: t.seq,
    config: formatConfig(t.params, keys),
    purpose: purposeOf(t),
    reason: t.reason,
    state: t.state,
    tokPerSec: Object.fromEntries(
      levels.map((c) => [c, t.runs.find((r) => r.concurrency === c)?.outputTokensPerSec ?? null]),
    ),
    objective: t.objective,
    vsBaseline: t === base ? 0 : relative(t.objective, base?.objective ?? null, objective.goal),
    acceptLength: acceptOf(t.runs, objective.concurrency),
    maxRunningRequests: t.capacity?.maxRunningRequests ?? null,
    verdict: verdictOf(t),
    isBest: t === best,
    isBaseline: t === base,
  }));
}

// One chart per tuned key: the objective at each value, failures marked.
function buildCharts(
  input: ReportInput,
  keys: string[],
  objective: ReportModel['objective'],
  bestSeq: number | null,
): ChartModel[] {
  return keys.map((key) => {
    const points = input.trials
      .filter(
        (t) =>
          key in t.params &&
          t.state !== 'skipped' &&
          t.state !== 'planned' &&
          t.state !== 'running' &&
          t.state !== 'deploying',
      )
      .map((t) => ({
        x: t.params[key] as ParamValue,
        seq: t.seq,
        y: t.state === 'measured' ? t.objective : null,
        status:
          t.state === 'failed'
            ? ('failed' as const)
            : t.state === 'infeasible'
              ? ('infeasible' as const)
              : t.constraintsOk === false
                ? ('violates' as const)
                : ('ok' as const),
      }));
    return {
      key,
      yLabel: `${labelMetric(objective.metric)} (c=${objective.concurrency})`,
      points,
      numeric: points.every((p) => typeof p.x === 'number'),
      bestSeq,
    };
  });
}

// The campaign timeline: trials, service actions and failures, in time order.
function buildTimeline(input: ReportInput, keys: string[]): TimelineEntry[] {
  const out: TimelineEntry[] = [
    {
      ts: input.campaign.createdAt,
      kind: 'campaign',
      text: `campaign "${input.campaign.name}" started (${input.campaign.engine})`,
    },
  ];
  for (const t of input.trials) {
    out.push({
      ts: t.startedAt,
      kind: 'trial',
      text: `trial ${t.seq} (${purposeOf(t)}) ${formatConfig(t.params, keys)}: ${t.reason.replace(STEP_NAMES, '').trim()}`,
    });
    if (!t.finishedAt) continue;
    const v = t.verdicts[0];
    const end = v
      ? `trial ${t.seq} ${t.state}: ${v.class} — ${v.summary}`
      : `trial ${t.seq} ${t.state}${t.objective !== null ? `: ${formatNumber(t.objective)}` : ''}`;
    out.push({ ts: t.finishedAt, kind: t.state === 'failed' ? 'failure' : 'trial', text: end });
  }
  for (const a of input.actions)
    out.push({
      ts: a.ts,
      kind: 'action',
      text: `${a.action} ${a.unit}${a.host ? ` on ${a.host}` : ''} by ${a.by}${a.why ? `: ${a.why}` : ''}`,
    });
  if (input.campaign.finishedAt)
    out.push({
      ts: input.campaign.finishedAt,
      kind: 'campaign',
      text: `campaign ${input.campaign.status}${input.campaign.summary ? `: ${input.campaign.summary}` : ''}`,
    });
  return out
    .map((e, i) => ({ e, i }))
    .sort((a, b) => (a.e.ts < b.e.ts ? -1 : a.e.ts > b.e.ts ? 1 : a.i - b.i))
    .map((x) => x.e);
}

// Every failed trial with its diagnosis.
function buildFailures(input: ReportInput, keys: string[]): FailureModel[] {
  return input.trials
    .filter((t) => t.state === 'failed' || t.verdicts.length)
    .map((t) => {
      const v = t.verdicts[0];
      return {
        seq: t.seq,
        config: formatConfig(t.params, keys),
        class: v ? (v.cause ? `${v.class} (${v.cause})` : v.class) : 'undiagnosed',
        confidence: v?.confidence ?? 'low',
        summary: v?.summary ?? t.error ?? 'no diagnosis was recorded',
        evidence: (v?.evidence ?? []).slice(0, MAX_EVIDENCE_LINES),
        remediation: (v?.remediation ?? []).map((r) => r.text),
      };
    });
}

// Restarts the campaign cost, as its summary counts them: each deploy of another config than the one in force, the
// rollback after each failure, and the final deploy of the winner (`final`) when it was not in force; systemd's own
// automatic restarts (NRestarts) are not spectune's and not counted.
function countRestarts(trials: ReportTrial[], final: Record<string, unknown> | null): number {
  let deployed: string | null = null;
  let n = 0;
  for (const t of trials) {
    const key = JSON.stringify(t.params);
    if (t.purpose.startsWith('baseline')) deployed = key;
    if (!DEPLOYED.has(t.state) || t.purpose.startsWith('baseline')) continue;
    if (key !== deployed) n++;
    if (t.state === 'failed') n++;
    else deployed = key;
  }
  return final && JSON.stringify(final) !== deployed ? n + 1 : n;
}

/** What every page of a simulated campaign's report says (HTML header and printed footer, Markdown top). */
export const SIMULATED_TEXT =
  "SIMULATED — this campaign ran on spectune's simulated engine (spectune sim), not on a real GPU server";

// Whether the campaign ran on spectune's simulated engine: the store's flag (the demo sets it), or what the store
// shows of the unit (its engine command is `spectune sim`), or, for stores without the flag, the demo's unit name.
export function isSimulated(
  campaign: ReportInput['campaign'],
  trials: readonly { capacity: CapacityFacts | null }[] = [],
): boolean {
  // The demo says so; any other campaign is simulated when the engine said so (its /server_info) or when the unit
  // it tuned runs `spectune sim`.
  if (campaign.simulated === true) return true;
  if (trials.some((t) => t.capacity?.simulated === true)) return true;
  const commands = (campaign.endState?.units ?? []).flatMap((u) => [u.operatorExecStart, u.execStart]);
  if (commands.some((c) => c !== null && SIM_COMMAND.test(c))) return true;
  return campaign.simulated === undefined && DEMO_UNIT_NAME.test(campaign.name);
}

// Every rank the campaign tuned, rank0 first: the config's target.hosts, else the units of its end state.
export function buildTargets(campaign: ReportInput['campaign']): TargetModel[] {
  const t = (
    campaign.config as { target?: { hosts?: { host?: string | null; unit?: string; role?: 'rank0' | 'rank1' }[] } }
  ).target;
  const hosts = Array.isArray(t?.hosts) ? orderRanks(t.hosts) : [];
  if (hosts.length) return hosts.map((h, rank) => ({ rank, host: h.host ?? 'this machine', unit: h.unit ?? '?' }));
  return (campaign.endState?.units ?? []).map((u, rank) => ({ rank, host: u.host, unit: u.unit }));
}

// The whole model.
export function buildReportModel(input: ReportInput): ReportModel {
  const config = input.campaign.config;
  const objective = readObjective(config);
  const keys = readKeys(config, input.trials);
  const concurrencies = [...new Set(input.trials.flatMap((t) => t.runs.map((r) => r.concurrency)))].sort(
    (a, b) => a - b,
  );
  const rows = buildRows(input, keys, concurrencies, objective);
  const t = input.trials;
  const best = t.find((_, i) => rows[i].isBest) ?? null;
  const baseline = t.find((_, i) => rows[i].isBaseline) ?? null;
  return {
    title: `spectune campaign ${input.campaign.id}: ${input.campaign.name}`,
    generatedAt: input.generatedAt,
    campaign: input.campaign,
    objective,
    keys,
    concurrencies,
    rows,
    best: rows.find((r) => r.isBest) ?? null,
    baseline: rows.find((r) => r.isBaseline) ?? null,
    charts: buildCharts(input, keys, objective, best?.seq ?? null),
    trialChart: buildTrialChart(t, rows, objective),
    levelCharts: buildLevelCharts(t, rows, concurrencies, objective),
    latency: buildLatency(t, rows, keys),
    levelBests: buildLevelBests(t, baseline, concurrencies, (p) => formatConfig(p, keys)),
    simulated: isSimulated(input.campaign, input.trials),
    targets: buildTargets(input.campaign),
    running: buildRunning(input.campaign.endState, best, keys),
    keep: buildKeep(input, best, baseline, keys),
    timeline: buildTimeline(input, keys),
    failures: buildFailures(input, keys),
    counts: {
      trials: t.length,
      measured: t.filter((x) => x.state === 'measured').length,
      failed: t.filter((x) => x.state === 'failed').length,
      infeasible: t.filter((x) => x.state === 'infeasible').length,
      restarts: countRestarts(t, input.campaign.status === 'done' ? ((best ?? baseline)?.params ?? null) : null),
    },
  };
}

// "rank 0 th1 u.service, rank 1 th2 u.service" (one host: "th1 u.service"), for the top of a report.
export function describeTargets(m: Pick<ReportModel, 'targets'>): string {
  if (!m.targets.length) return 'not recorded';
  return m.targets.map((t) => `${m.targets.length > 1 ? `rank ${t.rank} ` : ''}${t.host} ${t.unit}`).join(', ');
}

// One sentence for the top of a report.
export function summarizeModel(m: ReportModel): string {
  const c = m.counts;
  const head = `${c.trials} trials (${c.measured} measured, ${c.failed} failed, ${c.infeasible} refused as infeasible), ${c.restarts} restarts (${RESTARTS_COUNTED}).`;
  if (!m.best) return `${head} No usable config was measured.`;
  return `${head} Best: ${m.best.config} at ${formatNumber(m.best.objective)} ${m.objective.metric} (${formatPercent(m.best.vsBaseline)} vs baseline).`;
}
