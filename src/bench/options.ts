// Benchmark options: what the CLI and the tuner pass in, with defaults filled and checked in one place.
import { ANY_ENGINE_ENDPOINTS, type EngineEndpoints } from '../engines/registry.js';
import { ToolError } from '../errors.js';
import type { BenchApi, BenchPrompt } from './api.js';
import type { CachePolicy } from './cache.js';
import { UNIQUE_PREFIX_POLICY } from './cache.js';
import type { TransportChoice } from './transport.js';

/** Options of one benchmark (every level of it). */
export interface BenchOptions {
  /** Base URL of the server, e.g. http://127.0.0.1:30000 (a trailing /v1 is accepted). */
  url: string;
  /** API to stream from; default `chat`. */
  api?: BenchApi;
  /** Model name sent in the body; default `default` on the wire, null in the result. */
  model?: string | null;
  /** Bearer token; never printed. */
  apiKey?: string | null;
  /** What to do when the engine refuses the key (401/403): where the key comes from; default: the bench flags. */
  authHint?: string;
  /** Closed-loop concurrency levels (or the in-flight cap of an open-loop rate); default [1]. */
  concurrency?: number[];
  /** Measured requests per level; default max(16, 4 x concurrency) unless durationSec is set. */
  requests?: number | null;
  /** One measured request count per concurrency level (same order); overrides `requests`. */
  requestsPerLevel?: number[] | null;
  /** Measure each level for this long instead of a request count (in-flight requests finish). */
  durationSec?: number | null;
  /** Prompt length of the shipped prompt set, in tokens (approximate; the server's usage is reported). */
  inputTokens?: number;
  /** Fixed output length (ignore_eos, min_tokens = max_tokens); default 256. */
  outputTokens?: number;
  /** Warm-up requests per level, excluded from results; default = the level's concurrency. */
  warmup?: number | null;
  /** Open-loop Poisson arrival rate in requests/s; null = closed loop. */
  rate?: number | null;
  /** Prompts from the user's file (already parsed); default: the shipped set. */
  prompts?: BenchPrompt[] | null;
  /** Time limits by phase, in ms. */
  timeouts?: Partial<BenchTimeouts>;
  /** Stop a level once this fraction of at least MIN_REQUESTS_FOR_ERROR_STOP requests failed; default 0.5. */
  maxErrorFraction?: number;
  /** Skip higher closed-loop levels once output tok/s stops growing (the CLI turns this on); default false. */
  stopAtSaturation?: boolean;
  /** Scrape the engine's metrics and info endpoints around each level; default true. */
  scrapeEngine?: boolean;
  /** The endpoints scraped: the engine adapter's (default: every engine's, for an engine not named). */
  engineEndpoints?: EngineEndpoints;
  /** Clock in ms (monotonic); injected by tests. */
  now?: () => number;
  /** Epoch ms at clock time 0 (for RequestSample.startEpochMs); derived from the clock when not given. */
  epochOffsetMs?: number;
  /** Seed for prompt choice and Poisson arrivals. */
  seed?: number;
  /** How streams are read: the native reader when built (auto, default), `native` (required) or `js`. */
  transport?: TransportChoice;
  /** How every level starts from the same prefix-cache state (default: a unique random prefix per request). */
  cachePolicy?: CachePolicy;
}

/** The fix of a refused key when `spectune bench` runs on its own (the tuner names spectune.yaml's key instead). */
export const BENCH_AUTH_HINT =
  "the engine wants its --api-key: pass --api-key KEY or export SPECTUNE_API_KEY=<the value of the unit's --api-key>";

/** Time limits by phase (ms). */
export interface BenchTimeouts {
  connect: number;
  firstToken: number;
  stall: number;
}

/** Options with every default applied. */
export type ResolvedBenchOptions = Required<
  Omit<
    BenchOptions,
    'timeouts' | 'prompts' | 'requests' | 'requestsPerLevel' | 'durationSec' | 'warmup' | 'rate' | 'model' | 'apiKey'
  >
> & {
  timeouts: BenchTimeouts;
  prompts: BenchPrompt[] | null;
  requests: number | null;
  requestsPerLevel: number[] | null;
  durationSec: number | null;
  warmup: number | null;
  rate: number | null;
  model: string | null;
  apiKey: string | null;
};

// A first token may wait behind a full batch of long prefills; ten minutes only catches a hung server.
export const DEFAULT_TIMEOUTS: BenchTimeouts = { connect: 10_000, firstToken: 600_000, stall: 60_000 };
/** Default prompt and output lengths in tokens (shown in `spectune bench --help`). */
export const DEFAULT_LENGTHS = { inputTokens: 512, outputTokens: 256 } as const;
// Levels run at most this many concurrent streams: file descriptors and one event loop set the ceiling.
export const MAX_CONCURRENCY = 8192;
/** Prompt and output lengths stop here (2^20 tokens, beyond any served context): each stream keeps one timestamp per
 *  expected token, and a length of 1e216 was an internal error (the fuzz suite's find). */
export const MAX_TOKENS = 1 << 20;
/** The longest timer node keeps (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

// Fill defaults and reject impossible values with a usage error naming the flag.
export function resolveBenchOptions(o: BenchOptions): ResolvedBenchOptions {
  const r: ResolvedBenchOptions = {
    url: o.url,
    api: o.api ?? 'chat',
    model: o.model ?? null,
    apiKey: o.apiKey ?? null,
    authHint: o.authHint ?? BENCH_AUTH_HINT,
    concurrency: o.concurrency ?? [1],
    requests: o.requests ?? null,
    requestsPerLevel: o.requestsPerLevel ?? null,
    durationSec: o.durationSec ?? null,
    inputTokens: o.inputTokens ?? DEFAULT_LENGTHS.inputTokens,
    outputTokens: o.outputTokens ?? DEFAULT_LENGTHS.outputTokens,
    warmup: o.warmup ?? null,
    rate: o.rate ?? null,
    prompts: o.prompts ?? null,
    timeouts: { ...DEFAULT_TIMEOUTS, ...o.timeouts },
    maxErrorFraction: o.maxErrorFraction ?? 0.5,
    stopAtSaturation: o.stopAtSaturation ?? false,
    scrapeEngine: o.scrapeEngine ?? true,
    engineEndpoints: o.engineEndpoints ?? ANY_ENGINE_ENDPOINTS,
    now: o.now ?? (() => performance.now()),
    epochOffsetMs: o.epochOffsetMs ?? (o.now ? Date.now() - o.now() : performance.timeOrigin),
    seed: o.seed ?? 1,
    transport: o.transport ?? 'auto',
    cachePolicy: o.cachePolicy ?? UNIQUE_PREFIX_POLICY,
  };
  checkBenchOptions(r);
  return r;
}

function checkBenchOptions(r: ResolvedBenchOptions): void {
  try {
    const u = new URL(r.url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http');
  } catch {
    throw new ToolError('E_USAGE', `--url: expected an http(s) URL, got "${r.url}"`, {
      hint: 'e.g. --url http://127.0.0.1:30000',
    });
  }
  // The key travels in an Authorization header, which carries visible ASCII only (node throws on anything else).
  // The message never shows the key.
  if (r.apiKey && !/^[\x21-\x7e]+$/.test(r.apiKey)) {
    throw new ToolError(
      'E_USAGE',
      'the API key has characters an HTTP header cannot carry (spaces, control or non-ASCII characters)',
      {
        hint: 'check --api-key, $SPECTUNE_API_KEY or the variable target.apiKeyEnv names: a key is visible ASCII only',
      },
    );
  }
  if (!['chat', 'completions', 'sglang'].includes(r.api))
    throw new ToolError('E_USAGE', `--api: expected chat, completions or sglang, got "${r.api}"`);
  if (r.concurrency.length === 0 || r.concurrency.some((c) => !Number.isInteger(c) || c < 1 || c > MAX_CONCURRENCY)) {
    throw new ToolError(
      'E_USAGE',
      `--concurrency: expected integers 1..${MAX_CONCURRENCY}, got ${r.concurrency.join(',')}`,
      { hint: 'e.g. --concurrency 1,16,64' },
    );
  }
  // Timers take 1 ms .. 2^31-1 ms (node clamps a longer one to 1 ms with a warning, and throws on a negative one).
  for (const [key, flag] of [
    ['connect', 'connect-timeout'],
    ['firstToken', 'first-token-timeout'],
    ['stall', 'stall-timeout'],
  ] as const) {
    const ms = r.timeouts[key];
    if (!(ms >= 1 && ms <= MAX_TIMER_MS))
      throw new ToolError(
        'E_USAGE',
        `--${flag}: expected seconds between 0.001 and ${Math.floor(MAX_TIMER_MS / 1000)}, got ${ms / 1000}`,
      );
  }
  positive('requests', r.requests, true);
  if (
    r.requestsPerLevel !== null &&
    (r.requestsPerLevel.length !== r.concurrency.length ||
      r.requestsPerLevel.some((n) => !Number.isInteger(n) || n < 1))
  ) {
    throw new ToolError(
      'E_USAGE',
      `requests per level: expected ${r.concurrency.length} positive integers (one per concurrency level), got ${r.requestsPerLevel.join(',')}`,
    );
  }
  positive('duration', r.durationSec, false);
  positive('input-tokens', r.inputTokens, true, MAX_TOKENS);
  positive('output-tokens', r.outputTokens, true, MAX_TOKENS);
  positive('rate', r.rate, false);
  if (!['auto', 'native', 'js'].includes(r.transport))
    throw new ToolError('E_USAGE', `--transport: expected auto, native or js, got "${r.transport}"`);
  if (r.warmup !== null && (!Number.isInteger(r.warmup) || r.warmup < 0))
    throw new ToolError('E_USAGE', `--warmup: expected an integer >= 0, got ${r.warmup}`);
  if (r.requests !== null && r.durationSec !== null)
    throw new ToolError('E_USAGE', '--requests and --duration are exclusive', { hint: 'pick one' });
}

function positive(flag: string, v: number | null, integer: boolean, max = Infinity): void {
  if (v === null) return;
  if (!(v > 0) || !Number.isFinite(v) || (integer && !Number.isInteger(v))) {
    throw new ToolError('E_USAGE', `--${flag}: expected a positive ${integer ? 'integer' : 'number'}, got ${v}`);
  }
  if (v > max)
    throw new ToolError('E_USAGE', `--${flag}: at most ${max}, got ${v}`, {
      hint: 'no served model has a context that long',
    });
}

// Measured requests of a level when neither a count nor a duration is given: enough for a p99 to mean something
// at low concurrency, and every stream several times over at high concurrency.
export function defaultRequests(concurrency: number): number {
  return Math.max(16, 4 * concurrency);
}
