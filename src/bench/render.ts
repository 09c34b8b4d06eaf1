// Pure text rendering of benchmark progress and results (the CLI picks where each goes).
import type { BenchEvent } from './events.js';
import type { BenchRun, Summary } from './types.js';

// Width of the progress bar in characters: fits an 80-column terminal with the counters beside it.
const BAR_WIDTH = 24;

function fmt(v: number | null, digits = 1): string {
  return v === null ? '-' : v.toFixed(digits);
}

function fmtSummary(s: Summary, digits = 1): string {
  return `mean ${fmt(s.mean, digits)} p50 ${fmt(s.p50, digits)} p90 ${fmt(s.p90, digits)} p99 ${fmt(s.p99, digits)}`;
}

// One line per finished level, for logs, CI and piping.
export function formatLevelLine(r: BenchRun): string {
  const load = r.rate !== null ? `rate ${r.rate}/s (cap ${r.concurrency})` : `concurrency ${r.concurrency}`;
  const errs =
    Object.entries(r.errors)
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ') || 'none';
  const parts = [
    `${load}: ${r.requests.ok} ok, ${r.requests.failed} failed, ${fmt(r.outputTokensPerSec)} out tok/s, ${fmt(r.requestsPerSec, 2)} req/s`,
    `TTFT ms ${fmtSummary(r.ttftMs)}`,
    `ITL ms ${fmtSummary(r.itlMs, 2)}`,
    `E2E ms ${fmtSummary(r.e2eMs, 0)}`,
    `decode tok/s ${fmtSummary(r.decodeTokensPerSec)}`,
    `accept ${fmt(r.acceptLength, 2)}${r.acceptRate !== undefined && r.acceptRate !== null ? ` (rate ${fmt(r.acceptRate, 2)})` : ''}`,
    `errors ${errs}`,
  ];
  if (!r.usageFromServer && r.requests.ok > 0) parts.push('token counts from chunks (no server usage)');
  if (r.stoppedEarly) parts.push(`stopped early: ${r.stoppedEarly}`);
  return parts.join(' | ');
}

// A wait for a first token is worth showing from this long on (a healthy server answers well within it).
const SHOW_WAIT_MS = 1000;

// The live progress line on a terminal (redrawn in place with \r), and the periodic line when piped.
export function formatProgress(e: Extract<BenchEvent, { type: 'bench:progress' }>): string {
  const tps = e.outputTokensPerSec === null ? '' : `  ${e.outputTokensPerSec.toFixed(0)} tok/s`;
  const head = `c=${e.concurrency}${e.phase === 'warmup' ? ' warm-up' : ''}`;
  const waiting =
    e.waitingMs !== undefined && e.waitingMs !== null && e.waitingMs >= SHOW_WAIT_MS
      ? `  ${e.inFlight ?? '?'} in flight, waiting ${(e.waitingMs / 1000).toFixed(1)} s for a first token${e.firstTokenTimeoutMs ? ` (timeout ${e.firstTokenTimeoutMs / 1000} s)` : ''}`
      : '';
  if (e.total === null || e.total <= 0) return `${head} ${e.done} requests${tps}${waiting}`;
  const filled = Math.min(BAR_WIDTH, Math.round((BAR_WIDTH * e.done) / e.total));
  return `${head} [${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${e.done}/${e.total}${tps}${waiting}`;
}

// The `--json` document: the fields issue 5 promises, in its order, then the frames read together, the engine's own
// view around the level and why it stopped early; how the streams were read; the levels skipped and why; how each level
// started from the same cache state (cachePolicy). acceptRate/acceptSource follow acceptLength.
export function toJsonRuns(
  runs: BenchRun[],
  transport?: string,
  skipped: { concurrency: number; reason: string }[] = [],
  cachePolicy?: string,
): {
  runs: Record<string, unknown>[];
  transport?: string;
  skipped: { concurrency: number; reason: string }[];
  cachePolicy?: string;
} {
  return {
    runs: runs.map((r) => ({
      concurrency: r.concurrency,
      requests: r.requests,
      outputTokensPerSec: r.outputTokensPerSec,
      requestsPerSec: r.requestsPerSec,
      ttftMs: r.ttftMs,
      itlMs: r.itlMs,
      e2eMs: r.e2eMs,
      decodeTokensPerSec: r.decodeTokensPerSec,
      acceptLength: r.acceptLength,
      acceptRate: r.acceptRate ?? null,
      acceptSource: r.acceptSource ?? null,
      errors: r.errors,
      sharedReadFrames: r.sharedReadFrames,
      engine: r.engine,
      stoppedEarly: r.stoppedEarly,
    })),
    ...(transport ? { transport } : {}),
    skipped,
    ...(cachePolicy ? { cachePolicy } : {}),
  };
}
