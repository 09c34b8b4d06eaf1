// Memory feasibility before a ~100 s load: learn from earlier trials' capacity lines how max_total_num_tokens falls
// with CUDA-graph load (cuda_graph_max_bs × draft tokens; draft tokens = steps + 1 at topk 1) and predict an init OOM.
import type { ParamValue } from '../engines/types.js';
import type { HistoryEntry, Params, SearchSpace } from './types.js';

/** The predictor's opinion of one config (a superset of the tuner's FeasibilityPrediction). */
export interface FeasibilityPrediction {
  feasible: boolean;
  reason: string;
  /** The change that makes it fit, in words ("cuda_graph_max_bs=256"), or null. */
  suggestion: string | null;
  /** The same change as settings, or null. */
  change: Params | null;
  confidence: 'high' | 'medium' | 'low';
  predicted: { maxTotalNumTokens: number | null; maxRunningRequests: number | null };
}

/** Engine knowledge the predictor needs; defaults follow SGLang's canonical keys. */
export interface FeasibilityOptions {
  /** Settings in force when a key is absent from a config (e.g. the baseline's cuda_graph_max_bs). */
  defaults?: Params;
  /** The space, so that suggestions are values the search would try. */
  space?: SearchSpace;
  /** Concurrency the constraints need; a predicted max_running_requests below it is flagged. */
  needRunningRequests?: number;
}

// SGLang refuses to start ("Not enough memory") when the KV pool is empty; keep 1% of the unloaded pool as slack
// so a config predicted right at the edge is not called feasible on a rounding error.
export const MIN_TOKEN_FRACTION = 0.01;
// Verdict classes that mean "did not fit in memory" (other failures teach nothing about memory).
const MEMORY_CLASSES = new Set(['kv_cache_oom', 'cuda_oom', 'cuda_graph_capture_failure', 'host_oom_kill']);
// The keys that set CUDA-graph load; everything else must match for two trials to share one memory line.
const LOAD_KEYS = new Set([
  'speculative_num_steps',
  'speculative_eagle_topk',
  'speculative_num_draft_tokens',
  'cuda_graph_max_bs',
  'num_speculative_tokens',
  'draft_max',
]);

const num = (v: ParamValue | undefined): number | null =>
  typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v)) ? Number(v) : null;

// Tokens per request per decode step: SGLang draft tokens (steps + 1 at topk 1), vLLM k + 1, llama.cpp draft_max + 1.
export function draftTokensOf(p: Params): number {
  const explicit = num(p.speculative_num_draft_tokens);
  const steps = num(p.speculative_num_steps);
  const topk = num(p.speculative_eagle_topk) ?? 1;
  if (steps !== null && topk === 1) return steps + 1;
  if (explicit !== null) return explicit;
  const k = num(p.num_speculative_tokens) ?? num(p.draft_max);
  return k !== null ? k + 1 : 1;
}

// CUDA-graph load of a config: cuda_graph_max_bs × draft tokens (graph memory grows with both).
export function graphLoadOf(p: Params): number {
  return (num(p.cuda_graph_max_bs) ?? 1) * draftTokensOf(p);
}

// Two configs share a memory line when every non-load setting is equal.
function sameFamily(a: Params, b: Params): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)].filter((k) => !LOAD_KEYS.has(k)));
  return [...keys].every((k) => a[k] === b[k]);
}

// Least-squares line y = a + b·x; null with fewer than two distinct x.
export function fitLine(points: readonly { x: number; y: number }[]): { a: number; b: number } | null {
  const n = points.length;
  if (n < 2 || new Set(points.map((p) => p.x)).size < 2) return null;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const sxy = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  const b = sxy / sxx;
  return { a: my - b * mx, b };
}

/** What the history teaches about one family of configs. */
interface Evidence {
  ok: { p: Params; load: number; tokens: number | null; mrr: number | null }[];
  oomLoads: number[];
}

// Collect capacity facts and memory failures of the candidate's family.
function gather(history: readonly HistoryEntry[], cand: Params, defaults: Params): Evidence {
  const ev: Evidence = { ok: [], oomLoads: [] };
  for (const h of history) {
    const p = { ...defaults, ...h.config };
    if (!sameFamily(p, cand)) continue;
    if (h.status === 'failed') {
      const cls = h.verdict?.class === 'crash_loop' ? h.verdict.cause : h.verdict?.class;
      if (!h.verdict || (cls && MEMORY_CLASSES.has(cls))) ev.oomLoads.push(graphLoadOf(p));
    } else if ((h.status === 'ok' || h.status === 'measured') && h.capacity) {
      ev.ok.push({
        p,
        load: graphLoadOf(p),
        tokens: h.capacity.maxTotalNumTokens ?? null,
        mrr: h.capacity.maxRunningRequests ?? null,
      });
    }
  }
  return ev;
}

// max_running_requests falls with draft tokens as tokens / (α + β·draft); fit that and predict.
function predictRunning(ev: Evidence, tokens: number, draft: number): number | null {
  const pts = ev.ok
    .filter((o) => o.tokens && o.mrr)
    .map((o) => ({ x: draftTokensOf(o.p), y: (o.tokens as number) / (o.mrr as number) }));
  const fit = fitLine(pts);
  if (!fit) return pts.length ? Math.max(0, Math.floor(tokens / pts[0].y)) : null;
  const per = fit.a + fit.b * draft;
  return per > 0 ? Math.max(0, Math.floor(tokens / per)) : null;
}

// The change that fits: the largest cuda_graph_max_bs (from the space, else a power of two) that keeps the slack,
// or, when cuda_graph_max_bs is not known, the largest speculative_num_steps that does (at topk 1).
function suggestFit(cand: Params, line: { a: number; b: number }, opts: FeasibilityOptions): Params | null {
  const draft = draftTokensOf(cand);
  const maxLoad = (line.a * (1 - MIN_TOKEN_FRACTION)) / -line.b;
  const bs = num(cand.cuda_graph_max_bs);
  if (bs === null) return suggestSteps(cand, maxLoad);
  const maxBs = Math.floor(maxLoad / draft);
  if (maxBs < 1) return suggestSteps(cand, maxLoad / bs);
  const choices = opts.space
    ?.find((d) => d.key === 'cuda_graph_max_bs')
    ?.values.map(num)
    .filter((v): v is number => v !== null && v <= maxBs && v < bs);
  const pick = choices?.length ? Math.max(...choices) : 2 ** Math.floor(Math.log2(maxBs));
  return pick < bs ? { cuda_graph_max_bs: pick } : null;
}

// The largest speculative_num_steps whose draft tokens (steps + 1) fit a per-graph-batch load budget.
function suggestSteps(cand: Params, maxDraft: number): Params | null {
  const steps = num(cand.speculative_num_steps);
  const best = Math.floor(maxDraft) - 1;
  return steps !== null && (num(cand.speculative_eagle_topk) ?? 1) === 1 && best >= 1 && best < steps
    ? { speculative_num_steps: best }
    : null;
}

// Predict whether a config will start, from the family's earlier trials; null = no basis for an opinion.
export function predictFeasibility(
  history: readonly HistoryEntry[],
  params: Params,
  opts: FeasibilityOptions = {},
): FeasibilityPrediction | null {
  const cand = { ...(opts.defaults ?? {}), ...params };
  const load = graphLoadOf(cand);
  const ev = gather(history, cand, opts.defaults ?? {});
  const none = { maxTotalNumTokens: null, maxRunningRequests: null };
  if (ev.ok.some((o) => o.load >= load))
    return {
      feasible: true,
      reason: `a config with CUDA-graph load ≥ ${load} already started`,
      suggestion: null,
      change: null,
      confidence: 'high',
      predicted: none,
    };
  const line = fitLine(ev.ok.filter((o) => o.tokens !== null).map((o) => ({ x: o.load, y: o.tokens as number })));
  const failedAt = ev.oomLoads.filter((l) => l <= load);
  if (failedAt.length) {
    const change = line && line.b < 0 ? suggestFit(cand, line, opts) : null;
    return {
      feasible: false,
      reason: `a config with CUDA-graph load ${Math.min(...failedAt)} ≤ ${load} already failed on memory`,
      suggestion: describe(change),
      change,
      confidence: 'high',
      predicted: none,
    };
  }
  if (!line || line.b >= 0) return null;
  return fromLine(ev, cand, line, opts);
}

// Turn the fitted line into a prediction with its suggestion.
function fromLine(
  ev: Evidence,
  cand: Params,
  line: { a: number; b: number },
  opts: FeasibilityOptions,
): FeasibilityPrediction {
  const load = graphLoadOf(cand);
  const tokens = Math.round(line.a + line.b * load);
  const floor = line.a * MIN_TOKEN_FRACTION;
  const mrr = tokens > floor ? predictRunning(ev, tokens, draftTokensOf(cand)) : 0;
  const predicted = { maxTotalNumTokens: tokens, maxRunningRequests: mrr };
  const far = load > 2 * Math.max(...ev.ok.map((o) => o.load));
  const confidence = far ? 'medium' : 'high';
  if (tokens <= floor) {
    const change = suggestFit(cand, line, opts);
    const reason = `predicted max_total_num_tokens ${tokens} at CUDA-graph load ${load} (cuda_graph_max_bs × ${draftTokensOf(cand)} draft tokens): the KV pool would be empty (init OOM)`;
    return { feasible: false, reason, suggestion: describe(change), change, confidence, predicted };
  }
  const need = opts.needRunningRequests;
  const tight =
    need !== undefined && mrr !== null && mrr < need
      ? `; max_running_requests ≈ ${mrr} < ${need} needed by the constraints`
      : '';
  return {
    feasible: true,
    reason: `predicted max_total_num_tokens ≈ ${tokens}${mrr !== null ? `, max_running_requests ≈ ${mrr}` : ''}${tight}`,
    suggestion: null,
    change: null,
    confidence,
    predicted,
  };
}

// A change in words.
function describe(change: Params | null): string | null {
  return change
    ? Object.entries(change)
        .map(([k, v]) => `${k}=${String(v)}`)
        .join(' ')
    : null;
}

// After the trial: was the prediction wrong? (the tuner records this so the predictor's record is visible).
export function checkPrediction(
  pred: FeasibilityPrediction | null,
  outcome: { status: string; verdict?: { class: string; cause?: string | null } | null },
): { wrong: boolean; note: string } | null {
  if (!pred || (outcome.status !== 'ok' && outcome.status !== 'measured' && outcome.status !== 'failed')) return null;
  const started = outcome.status !== 'failed';
  const cls = outcome.verdict?.class === 'crash_loop' ? outcome.verdict.cause : outcome.verdict?.class;
  const memoryFailure =
    !started && (!outcome.verdict || (cls !== undefined && cls !== null && MEMORY_CLASSES.has(cls)));
  if (pred.feasible && memoryFailure)
    return { wrong: true, note: `predicted to fit (${pred.reason}) but failed on memory` };
  if (!pred.feasible && started) return { wrong: true, note: `predicted not to fit (${pred.reason}) but started` };
  return { wrong: false, note: pred.feasible ? 'predicted to fit; it did' : 'predicted not to fit; it did not' };
}
