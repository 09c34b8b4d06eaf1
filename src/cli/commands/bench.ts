// `spectune bench`: parse flags, run the benchmark, render progress on stderr and results on stdout.
import { benchEndpoint, type BenchRequest } from '../../app/bench.js';
import { DEFAULT_LENGTHS, DEFAULT_TIMEOUTS, type BenchApi } from '../../bench/index.js';
import { ENGINE_NAMES } from '../../engines/index.js';
import { formatLevelLine, formatProgress, toJsonRuns } from '../../bench/render.js';
import type { EventSink, SpectuneEvent } from '../../tune/events.js';
import { redactText, redactValue } from '../../redact.js';
import { numberFlag, numberListFlag, parseFlags } from '../args.js';
import { EXIT } from '../exit.js';
import type { CliIo, Command } from '../io.js';

// Open-loop default cap on requests in flight: high enough not to shape the load, low enough for one event loop.
const DEFAULT_RATE_CAP = 1024;
const S = (ms: number): number => ms / 1000;

const USAGE = `usage: spectune bench --url URL [flags]
  --url URL                 the server (http or https; user:password@ in it is never printed)
  --api chat|completions|sglang   which API to stream (default chat)
  --model M                 model name sent (default: the first of /v1/models)
  --api-key K               bearer token (default: $SPECTUNE_API_KEY)
  --concurrency 1,16,64     closed-loop levels, in order (default 1; with --rate: the in-flight cap, default ${DEFAULT_RATE_CAP})
  --requests N | N1,N2,.. | --duration S   measured requests per level, one count for all or one per level
                            (default max(16, 4 x concurrency)), or seconds per level
  --input-tokens N          prompt length of the shipped prompt set (default ${DEFAULT_LENGTHS.inputTokens})
  --output-tokens N         fixed output length (default ${DEFAULT_LENGTHS.outputTokens})
  --warmup N                warm-up requests per level, not measured (default: the level's concurrency)
  --rate R                  open loop: Poisson arrivals at R requests/s
  --prompts FILE            your prompts (JSONL or ShareGPT JSON) instead of the shipped set
  --connect-timeout S       a request that has no connection after S seconds fails (default ${S(DEFAULT_TIMEOUTS.connect)})
  --first-token-timeout S   a request with no first token after S seconds fails (default ${S(DEFAULT_TIMEOUTS.firstToken)})
  --stall-timeout S         a stream silent for S seconds between tokens fails (default ${S(DEFAULT_TIMEOUTS.stall)})
  --no-saturation-guard     run every level; by default a level that adds < 5% output tok/s over a lower one ends the
                            sweep, and the skipped levels are reported (stderr, "skipped" in --json)
  --transport auto|native|js   how streams are read (default auto: the native reader when built)
  --engine ${ENGINE_NAMES.join('|')}|none   how every level starts from the same prefix-cache state: the engine's own
                            reset (SGLang /flush_cache, vLLM /reset_prefix_cache, llama.cpp cache_prompt=false);
                            default a random prefix unique to each request; none keeps the cache
  --json                    {"runs": [...], "transport", "skipped", "cachePolicy"} on stdout; progress on stderr
examples:
  spectune bench --url http://127.0.0.1:30000
  spectune bench --url http://gpu1:30000 --concurrency 1,16,64 --requests 64 --output-tokens 256 --json
  spectune bench --url http://gpu1:8000 --rate 4 --duration 60 --first-token-timeout 30`;

const FLAGS = {
  url: { type: 'string' },
  api: { type: 'string' },
  model: { type: 'string' },
  'api-key': { type: 'string' },
  concurrency: { type: 'string' },
  requests: { type: 'string' },
  duration: { type: 'string' },
  'input-tokens': { type: 'string' },
  'output-tokens': { type: 'string' },
  warmup: { type: 'string' },
  rate: { type: 'string' },
  prompts: { type: 'string' },
  'connect-timeout': { type: 'string' },
  'first-token-timeout': { type: 'string' },
  'stall-timeout': { type: 'string' },
  'no-saturation-guard': { type: 'boolean' },
  transport: { type: 'string' },
  engine: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

// A timeout flag in seconds as milliseconds, when given.
function timeoutFlag(v: Record<string, string | boolean | undefined>, flag: string): number | undefined {
  const raw = v[flag] as string | undefined;
  return raw === undefined ? undefined : numberFlag(flag, raw, NaN) * 1000;
}

// --requests N (every level) or N1,N2,... (one count per concurrency level).
function requestCounts(raw: string | undefined): { requests: number | null; requestsPerLevel: number[] | null } {
  if (raw === undefined) return { requests: null, requestsPerLevel: null };
  const list = numberListFlag('requests', raw, []);
  return list.length > 1
    ? { requests: Math.max(...list), requestsPerLevel: list }
    : { requests: list[0], requestsPerLevel: null };
}

// Turn flags into the benchmark request (validation of values happens in the library).
function toRequest(v: Record<string, string | boolean | undefined>, env: NodeJS.ProcessEnv): BenchRequest {
  const s = (k: string): string | undefined => v[k] as string | undefined;
  const opt = (k: string): number | null => (s(k) === undefined ? null : numberFlag(k, s(k), NaN));
  const rate = opt('rate');
  const timeouts: Record<string, number> = {};
  const set = (key: string, ms: number | undefined): void => {
    if (ms !== undefined) timeouts[key] = ms;
  };
  set('connect', timeoutFlag(v, 'connect-timeout'));
  set('firstToken', timeoutFlag(v, 'first-token-timeout'));
  set('stall', timeoutFlag(v, 'stall-timeout'));
  return {
    url: s('url') ?? '',
    api: (s('api') ?? 'chat') as BenchApi,
    model: s('model') ?? null,
    apiKey: s('api-key') ?? env.SPECTUNE_API_KEY ?? null,
    concurrency: numberListFlag('concurrency', s('concurrency'), rate !== null ? [DEFAULT_RATE_CAP] : [1]),
    ...requestCounts(s('requests')),
    durationSec: opt('duration'),
    inputTokens: opt('input-tokens') ?? undefined,
    outputTokens: opt('output-tokens') ?? undefined,
    warmup: opt('warmup'),
    rate,
    promptsFile: s('prompts') ?? null,
    timeouts,
    stopAtSaturation: v['no-saturation-guard'] !== true,
    transport: (s('transport') ?? 'auto') as BenchRequest['transport'],
    cacheEngine: s('engine') ?? null,
  };
}

/** Piped progress: a plain line at most this often (more often when a short first-token timeout is running out). */
const PLAIN_PROGRESS_MS = 5000;
const PLAIN_PROGRESS_MIN_MS = 1000;

// Progress: a live bar on a terminal; piped, a plain line when a level or warm-up starts and then periodically;
// warnings and stops always get a line.
function createRenderer(io: CliIo, json: boolean): { sink: EventSink; clear: () => void } {
  const tty = io.stderr.isTTY === true;
  let barShown = false;
  let lastPlain = { key: '', at: -Infinity };
  const clear = (): void => {
    if (barShown) io.stderr.write('\r\x1b[2K');
    barShown = false;
  };
  const plainProgress = (e: Extract<SpectuneEvent, { type: 'bench:progress' }>): void => {
    const key = `${e.concurrency}/${e.phase ?? 'measure'}`;
    const every = Math.max(PLAIN_PROGRESS_MIN_MS, Math.min(PLAIN_PROGRESS_MS, (e.firstTokenTimeoutMs ?? Infinity) / 2));
    if (key === lastPlain.key && e.ts - lastPlain.at < every) return;
    lastPlain = { key, at: e.ts };
    io.stderr.write(`spectune: ${formatProgress(e)}\n`);
  };
  const sink: EventSink = (e) => {
    if (e.type === 'bench:progress') {
      if (tty) {
        io.stderr.write(`\r\x1b[2K${formatProgress(e)}`);
        barShown = true;
      } else plainProgress(e);
    } else if (e.type === 'bench:level') {
      clear();
      (json ? io.stderr : io.stdout).write(`${formatLevelLine(e.run)}\n`);
    } else if (e.type === 'bench:stopped') {
      clear();
      io.stderr.write(`spectune: warn: concurrency ${e.concurrency}: ${redactText(e.reason)}\n`);
    } else if (e.type === 'log' && e.level !== 'info') {
      clear();
      io.stderr.write(`spectune: ${e.level}: ${redactText(e.message)}\n`);
    }
  };
  return { sink, clear };
}

// Entry point of `spectune bench`.
export const run: Command = async (argv, io) => {
  const { values } = parseFlags(argv, FLAGS, USAGE);
  if (values.help) {
    io.stdout.write(`${USAGE}\n`);
    return EXIT.ok;
  }
  if (!values.url) {
    io.stderr.write(
      'spectune: bench needs --url (hint: e.g. spectune bench --url http://127.0.0.1:30000; `spectune bench --help` for every flag)\n',
    );
    return EXIT.usage;
  }
  const json = values.json === true;
  const r = createRenderer(io, json);
  try {
    const result = await benchEndpoint(toRequest(values, io.env), r.sink);
    r.clear();
    const skipped = result.skipped ?? [];
    if (skipped.length) {
      io.stderr.write(
        `spectune: warn: skipped concurrency ${skipped.map((s) => s.concurrency).join(',')} of the levels asked for (${redactText(skipped[0].reason)})${skipped[0].reason.startsWith('server saturated') ? '; pass --no-saturation-guard to run every level' : ''}\n`,
      );
    }
    if (json)
      io.stdout.write(
        `${JSON.stringify(redactValue(toJsonRuns(result.runs, result.transport, skipped, result.cachePolicy)))}\n`,
      );
    const failed = result.runs.some((x) => x.requests.ok === 0);
    return failed ? EXIT.failure : EXIT.ok;
  } finally {
    r.clear();
  }
};
