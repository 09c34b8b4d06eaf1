// `spectune bench`: parse flags, run the benchmark, render progress on stderr and results on stdout.
import { benchEndpoint, type BenchRequest } from '../../app/bench.js';
import type { BenchApi } from '../../bench/index.js';
import { formatLevelLine, formatProgress, toJsonRuns } from '../../bench/render.js';
import type { EventSink } from '../../events.js';
import { redactText } from '../../redact.js';
import { numberFlag, numberListFlag, parseFlags } from '../args.js';
import { EXIT } from '../exit.js';
import type { CliIo, Command } from '../io.js';

const USAGE = `usage: spectune bench --url URL [--api chat|completions|sglang] [--model M] [--api-key K]
  [--concurrency 1,16,64] [--requests N | N1,N2,.. (one per level) | --duration S] [--input-tokens N] [--output-tokens N]
  [--warmup N] [--rate R] [--prompts FILE] [--first-token-timeout S] [--stall-timeout S]
  [--transport auto|native|js] [--engine sglang|vllm|llamacpp|none] [--json]
  --engine picks how every level starts from the same prefix-cache state (the engine's own reset: SGLang
  /flush_cache, vLLM /reset_prefix_cache, llama.cpp cache_prompt=false); default a unique random prefix per
  request; none keeps the cache. The API key may also come from SPECTUNE_API_KEY. With --rate, --concurrency caps requests in flight (default ${1024}).`;

// Open-loop default cap on requests in flight: high enough not to shape the load, low enough for one event loop.
const DEFAULT_RATE_CAP = 1024;

const FLAGS = {
  url: { type: 'string' }, api: { type: 'string' }, model: { type: 'string' }, 'api-key': { type: 'string' },
  concurrency: { type: 'string' }, requests: { type: 'string' }, duration: { type: 'string' },
  'input-tokens': { type: 'string' }, 'output-tokens': { type: 'string' }, warmup: { type: 'string' },
  rate: { type: 'string' }, prompts: { type: 'string' }, 'first-token-timeout': { type: 'string' },
  'stall-timeout': { type: 'string' }, transport: { type: 'string' }, engine: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
} as const;

// --requests N (every level) or N1,N2,... (one count per concurrency level).
function requestCounts(raw: string | undefined): { requests: number | null; requestsPerLevel: number[] | null } {
  if (raw === undefined) return { requests: null, requestsPerLevel: null };
  const list = numberListFlag('requests', raw, []);
  return list.length > 1 ? { requests: Math.max(...list), requestsPerLevel: list } : { requests: list[0], requestsPerLevel: null };
}

// Turn flags into the benchmark request (validation of values happens in the library).
function toRequest(v: Record<string, string | boolean | undefined>, env: NodeJS.ProcessEnv): BenchRequest {
  const s = (k: string): string | undefined => v[k] as string | undefined;
  const opt = (k: string): number | null => (s(k) === undefined ? null : numberFlag(k, s(k), NaN));
  const rate = opt('rate');
  const timeouts: Record<string, number> = {};
  if (s('first-token-timeout') !== undefined) timeouts.firstToken = numberFlag('first-token-timeout', s('first-token-timeout'), NaN) * 1000;
  if (s('stall-timeout') !== undefined) timeouts.stall = numberFlag('stall-timeout', s('stall-timeout'), NaN) * 1000;
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
    stopAtSaturation: true,
    transport: (s('transport') ?? 'auto') as BenchRequest['transport'],
    cacheEngine: s('engine') ?? null,
  };
}

// Progress: a live bar on a terminal, one line per level otherwise; warnings and stops always get a line.
function createRenderer(io: CliIo, json: boolean): { sink: EventSink; clear: () => void } {
  const tty = io.stderr.isTTY === true;
  let barShown = false;
  const clear = (): void => {
    if (barShown) io.stderr.write('\r\x1b[2K');
    barShown = false;
  };
  const sink: EventSink = (e) => {
    if (e.type === 'bench:progress' && tty) {
      io.stderr.write(`\r\x1b[2K${formatProgress(e)}`);
      barShown = true;
    } else if (e.type === 'bench:level') {
      clear();
      (json ? io.stderr : io.stdout).write(`${formatLevelLine(e.run)}\n`);
    } else if (e.type === 'bench:stopped') {
      clear();
      io.stderr.write(`spectune: concurrency ${e.concurrency}: ${redactText(e.reason)}\n`);
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
    io.stderr.write(`spectune: bench needs --url\n${USAGE}\n`);
    return EXIT.usage;
  }
  const json = values.json === true;
  const r = createRenderer(io, json);
  try {
    const result = await benchEndpoint(toRequest(values, io.env), r.sink);
    if (json) io.stdout.write(`${JSON.stringify(toJsonRuns(result.runs, result.transport, result.cachePolicy))}\n`);
    const failed = result.runs.some((x) => x.requests.ok === 0);
    return failed ? EXIT.failure : EXIT.ok;
  } finally {
    r.clear();
  }
};
