// Pure reading of the engine's own view: Prometheus samples (/metrics, parsed by engines/prometheus.ts) and SGLang's
// /server_info JSON, as one engine-neutral view.
import { meanMetric, sumMetric, type PromSample } from '../engines/prometheus.js';
import { ENGINE_NAMES, getEngine } from '../engines/registry.js';
import type { EngineViewMetric } from '../engines/types.js';

export { parsePrometheus, type PromSample } from '../engines/prometheus.js';

/** Engine view keys, the same for every engine (null when the engine does not export it). */
export type EngineView = Record<string, number | null>;

// Every registered engine's Prometheus names of one figure, in registry order (the first name exported wins).
function namesOf(metric: EngineViewMetric): string[] {
  return ENGINE_NAMES.flatMap((n) => getEngine(n).metricNames[metric] ?? []);
}

// Pick the engine-neutral figures the tuner needs out of /metrics and /server_info.
export function summarizeEngineView(samples: PromSample[] | null, serverInfo: unknown): EngineView {
  const s = samples ?? [];
  return {
    runningRequests: sumMetric(s, ...namesOf('runningRequests')),
    queuedRequests: sumMetric(s, ...namesOf('queuedRequests')),
    kvUsage: meanMetric(s, ...namesOf('kvUsage')),
    specAcceptLength: meanMetric(s, ...namesOf('specAcceptLength')),
    specAcceptRate: meanMetric(s, ...namesOf('specAcceptRate')),
    specDraftsTotal: sumMetric(s, ...namesOf('specDraftsTotal')),
    specAcceptedTotal: sumMetric(s, ...namesOf('specAcceptedTotal')),
    specDraftTokensTotal: sumMetric(s, ...namesOf('specDraftTokensTotal')),
    generationTokensTotal: sumMetric(s, ...namesOf('generationTokensTotal')),
    genThroughput: meanMetric(s, ...namesOf('genThroughput')),
    serverAvgAcceptLength: readServerInfoAcceptLength(serverInfo),
    maxRunningRequests: readServerInfoNumber(serverInfo, 'max_running_requests'),
    maxTotalTokens: readServerInfoNumber(serverInfo, 'max_total_num_tokens'),
  };
}

function readServerInfoAcceptLength(info: unknown): number | null {
  if (!info || typeof info !== 'object') return null;
  const states = (info as { internal_states?: unknown }).internal_states;
  const vs = (Array.isArray(states) ? states : [info])
    .map((st) => (st && typeof st === 'object' ? (st as Record<string, unknown>).avg_spec_accept_length : undefined))
    .filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  return vs.length ? vs.reduce((a, b) => a + b, 0) / vs.length : null;
}

function readServerInfoNumber(info: unknown, key: string): number | null {
  if (!info || typeof info !== 'object') return null;
  const direct = (info as Record<string, unknown>)[key];
  if (typeof direct === 'number') return direct;
  const states = (info as { internal_states?: unknown }).internal_states;
  if (Array.isArray(states) && states[0] && typeof states[0] === 'object') {
    const v = (states[0] as Record<string, unknown>)[key];
    if (typeof v === 'number') return v;
  }
  return null;
}

// Acceptance length of a level: vLLM's (or llama-server's --metrics) counters' delta (1 + accepted/drafts); else SGLang's interval gauge, read
// mid-level first (it drops to 0 once the server idles) then after; else the lifetime average from /server_info;
// null when the engine runs without speculative decoding.
export function computeAcceptLength(
  before: EngineView | null,
  after: EngineView | null,
  during: EngineView | null = null,
): number | null {
  if (!after) return null;
  const drafts = delta(before?.specDraftsTotal, after.specDraftsTotal);
  const accepted = delta(before?.specAcceptedTotal, after.specAcceptedTotal);
  if (drafts !== null && accepted !== null && drafts > 0) return 1 + accepted / drafts;
  for (const v of [during?.specAcceptLength, after.specAcceptLength, after.serverAvgAcceptLength]) {
    if (typeof v === 'number' && v > 0) return v;
  }
  return null;
}

function delta(a: number | null | undefined, b: number | null | undefined): number | null {
  return typeof a === 'number' && typeof b === 'number' ? b - a : null;
}

/** Sums of llama-server's per-request `timings` draft counts over one level. */
export interface StreamDraftCounts {
  requests: number;
  drafted: number;
  accepted: number;
  predicted: number;
}

/** A level's acceptance: tokens per target step, accepted / drafted, and where the figures came from. */
export interface LevelAcceptance {
  acceptLength: number | null;
  acceptRate: number | null;
  source: 'metrics' | 'stream' | null;
}

// A level's acceptance: the engine's counters first (exact), else the streams' own `timings` (llama-server without
// --metrics): tokens per target decode step = (generated - 1) / (generated - 1 - accepted), rate = accepted / drafted.
export function computeAcceptance(
  before: EngineView | null,
  after: EngineView | null,
  during: EngineView | null,
  stream: StreamDraftCounts | null,
): LevelAcceptance {
  const fromEngine = computeAcceptLength(before, after, during);
  const draftTokens = delta(before?.specDraftTokensTotal, after?.specDraftTokensTotal);
  const accepted = delta(before?.specAcceptedTotal, after?.specAcceptedTotal);
  const engineRate = draftTokens !== null && accepted !== null && draftTokens > 0 ? accepted / draftTokens : null;
  if (fromEngine !== null) {
    const rate = engineRate ?? (stream && stream.drafted > 0 ? stream.accepted / stream.drafted : null);
    return { acceptLength: fromEngine, acceptRate: rate, source: 'metrics' };
  }
  if (!stream || stream.requests === 0 || stream.drafted <= 0)
    return { acceptLength: null, acceptRate: null, source: null };
  const steps = stream.predicted - stream.requests - stream.accepted;
  const length = steps > 0 ? (stream.predicted - stream.requests) / steps : null;
  return { acceptLength: length, acceptRate: stream.accepted / stream.drafted, source: 'stream' };
}
