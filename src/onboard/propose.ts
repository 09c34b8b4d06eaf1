// The spectune.yaml init writes (pure): target, space, objective, constraints, benchmark and budget proposed from
// what the unit runs and how long it takes to start, each with a comment saying why.
import { getEngine } from '../engines/registry.js';
import { recommendedStopSec } from './checks.js';
import { proposeSpace, servingSlots, spaceEntries } from './space.js';
import type { EngineUnit, StartupReading } from './types.js';
import { renderYaml, type Commented, type YamlValue } from './yaml.js';

/** Everything init learned about the chosen unit. */
export interface InitFacts {
  /** The ssh destination as given (--host), or null for this machine. */
  host: string | null;
  /** Address of the host as this machine reaches it, for the endpoint. */
  endpointHost: string;
  unit: EngineUnit;
  startup: StartupReading | null;
  timeoutStopMs: number | null;
  /** Other engine units found on the host (listed in the header). */
  others: EngineUnit[];
  /** When init ran (ISO), for the header. */
  generatedAt: string;
  /** A multi-node group: every rank found (rank order; `host`/`endpointHost` are rank0's), written under hosts:. */
  group?: { host: string | null; unit: string; rank: number }[];
}

/** Output tokens per benchmark request: long enough for steady decode, short enough for quick trials. */
const OUTPUT_TOKENS = 256;
/** The smallest ready deadline proposed (the controller's default). */
const MIN_READY_MIN = 20;
/** Benchmark time per trial (both levels plus warm-up), for the budget estimate. */
const BENCH_MIN_PER_TRIAL = 4;
const TRIALS = 20;
/** Concurrency of the throughput constraint at most (beyond this the constraint mostly measures the queue). */
const MAX_CONSTRAINT_CONCURRENCY = 16;

// The shortest spelling of the engine's request-cap flag (llama-server -np).
function capSpelling(u: EngineUnit): string {
  const { params, maxRequestsKey } = getEngine(u.engine);
  const spec = params.find((p) => p.key === maxRequestsKey);
  return [spec?.flag ?? maxRequestsKey, ...(spec?.aliases ?? [])].sort((a, b) => a.length - b.length)[0];
}

// The benchmark levels: one user (the objective) and a loaded level the unit can serve at once.
function levels(u: EngineUnit): { levels: number[]; why: string } {
  const engine = getEngine(u.engine);
  const slots = servingSlots(u) ?? engine.defaultMaxRequests ?? MAX_CONSTRAINT_CONCURRENCY;
  const top = Math.min(MAX_CONSTRAINT_CONCURRENCY, slots);
  if (top <= 1)
    return {
      levels: [1],
      why: `the unit serves one request at a time (${engine.defaultMaxRequests !== undefined ? `${capSpelling(u)} 1 or default slots` : 'its request cap is 1'}): one level`,
    };
  const known = servingSlots(u) !== null ? `the unit serves up to ${slots} at once` : 'no request cap in the command';
  return { levels: [1, top], why: `1 user for the objective, ${top} for the throughput constraint (${known})` };
}

// Minutes, rounded up, of a ready deadline 3× the longest start-up seen (at least the default 20 min).
function readyMinutes(st: StartupReading | null): number {
  const worst = st?.longest?.seconds ?? 0;
  return Math.max(MIN_READY_MIN, Math.ceil((worst * 3) / 60));
}

// The header: provenance, what was found, and what to check before tuning.
function header(f: InitFacts, stopNeed: number): string[] {
  const u = f.unit;
  const spec =
    Object.entries(u.speculative)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ') || 'none';
  const st = f.startup?.last
    ? `${f.startup.last.seconds} s (journal: start line to the ready line${f.startup.starts > 1 ? `; longest of ${f.startup.starts} starts ${f.startup.longest?.seconds} s` : ''})`
    : 'not measured (no ready line in the journal of the current run)';
  const stop =
    f.timeoutStopMs === null ? 'unknown' : f.timeoutStopMs === Infinity ? 'infinity' : `${f.timeoutStopMs / 1000} s`;
  return [
    `Written by \`spectune init\` at ${f.generatedAt} from ${u.unit} on ${f.host ?? 'this machine'}. Review every choice, then run`,
    '`spectune doctor` and `spectune tune --dry-run` before `spectune tune`. Fields: schema/spectune.schema.json in the package.',
    '',
    `Found: ${u.engine}, model ${u.model ?? '(set by a variable)'}, port ${u.port}${u.portIsDefault ? ' (engine default)' : ''}, speculative settings in force: ${spec}`,
    `Start-up time: ${st}. TimeoutStopSec: ${stop}${typeof f.timeoutStopMs === 'number' && f.timeoutStopMs !== Infinity && f.timeoutStopMs / 1000 < stopNeed ? ` — shorter than the ${stopNeed} s a ${OUTPUT_TOKENS}-token request may need to drain: see \`spectune doctor\`` : ''}.`,
    ...(f.others.length
      ? [
          `Other engine units on this host (not tuned here; pick with --unit): ${f.others.map((o) => `${o.unit} (${o.engine}${o.source === 'docker' ? ', docker' : ''})`).join(', ')}`,
        ]
      : []),
    ...u.warnings.map((w) => `Warning from the ${u.engine} adapter: ${w}`),
    ...(f.group && u.nodes
      ? [
          `Multi-node group (${u.nodes.flags ?? `--nnodes ${u.nodes.count}`}): ${f.group.map((r) => `rank${r.rank} ${r.host ?? 'this machine'} ${r.unit}`).join(', ')}; every command changes all ranks as one (--rank N: one, and the ranks then differ).`,
        ]
      : []),
    ...(u.nodes && !f.group
      ? [
          `This unit is rank ${u.nodes.rank} of ${u.nodes.count} nodes: list every rank under target.hosts (spectune init --host per rank writes them).`,
        ]
      : []),
    ...(u.headNote ? [`Multi-node: ${u.headNote}.`] : []),
  ];
}

// The target section.
function target(f: InitFacts): Record<string, YamlValue | Commented> {
  const u = f.unit;
  const one = (host: string | null, unit: string, rank: number | null): Record<string, YamlValue> => ({
    ...(host ? { host } : {}),
    unit,
    ...(rank !== null ? { role: `rank${rank}` } : {}),
  });
  const hosts = f.group
    ? f.group.map((r) => one(r.host, r.unit, r.rank))
    : [one(f.host, u.unit, u.nodes ? u.nodes.rank : null)];
  const endpointHost = f.endpointHost.includes(':') ? `[${f.endpointHost}]` : f.endpointHost;
  return {
    engine: { comment: [`read from ExecStart by the ${u.engine} adapter`], value: u.engine },
    endpoint: {
      comment: [
        `the unit's --port${u.portIsDefault ? ' (absent: the engine default)' : ''} on ${f.endpointHost}, as this machine reaches it`,
      ],
      value: `http://${endpointHost}:${u.port}`,
    },
    ...(u.apiKeySet
      ? {
          apiKeyEnv: {
            comment: [
              'the unit passes --api-key: export the key in this variable before `spectune tune` (it is never copied into this file)',
            ],
            value: 'SPECTUNE_API_KEY',
          },
        }
      : {}),
    hosts: {
      comment: [
        f.group
          ? 'every rank of the group (rank0 serves the endpoint); spectune deploys through a drop-in on each, the unit files are never edited'
          : 'where the unit runs; spectune deploys through a drop-in, the unit file itself is never edited',
      ],
      value: hosts,
    },
  };
}

// The proposed config as commented YAML, with the pieces tests and the CLI summary use.
export function proposeConfig(f: InitFacts): { yaml: string; space: string[]; levels: number[]; readyMinutes: number } {
  const u = f.unit;
  const dims = proposeSpace(u);
  const lv = levels(u);
  const top = lv.levels[lv.levels.length - 1];
  const ready = readyMinutes(f.startup);
  const startMin = (f.startup?.longest?.seconds ?? 120) / 60;
  const hours = Math.ceil((TRIALS * (startMin + BENCH_MIN_PER_TRIAL)) / 60);
  const stopNeed = recommendedStopSec(OUTPUT_TOKENS, 200);
  const constraints: YamlValue[] = [
    ...(top > 1
      ? [{ metric: 'outputTokensPerSec', concurrency: top, op: '>=', value: '90%', relativeTo: 'baseline' }]
      : []),
    { metric: 'ttftMs.p99', concurrency: top, op: '<=', value: '150%', relativeTo: 'baseline' },
  ];
  const doc: Record<string, YamlValue | Commented> = {
    target: { comment: [], value: target(f) },
    space: {
      comment: ["What to search, in the engine's canonical setting names; the config running now is the baseline."],
      value: spaceEntries(dims),
    },
    search: {
      comment: [
        'adaptive: measure the baseline, climb while the gain beats the 3% noise margin, bisect a failure boundary, repeat',
        'near-ties and soak the winner: fewer restarts than a grid.',
      ],
      value: { strategy: 'adaptive', noiseMargin: '3%', repeats: 2, soak: { repeats: 1 } },
    },
    objective: {
      comment: [
        'Speculative decoding pays most for one user: per-request decode speed (tok/s, median) at concurrency 1.',
      ],
      value: { metric: 'decodeTokensPerSec.p50', concurrency: 1, goal: 'maximize' },
    },
    constraints: {
      comment: [
        ...(top > 1
          ? [
              `Keep at least 90% of the baseline's aggregate throughput at ${top} concurrent requests (speculation spends`,
              'compute that batching would use)...',
            ]
          : []),
        `${top > 1 ? '...and' : 'Keep'} the p99 time to first token within 150% of the baseline's.`,
      ],
      value: constraints,
    },
    benchmark: {
      comment: [
        `Levels: ${lv.why}. ${OUTPUT_TOKENS} output tokens per request: steady decode, quick trials.`,
        `timeouts.ready: 3× the longest start-up seen (at least ${MIN_READY_MIN} min) — a start slower than this is stopped and rolled back.`,
      ],
      value: {
        concurrency: lv.levels,
        requests: Math.max(32, top * 2),
        inputTokens: 512,
        outputTokens: OUTPUT_TOKENS,
        warmup: 2,
        timeouts: { ready: `${ready}m`, firstToken: '120s', stall: '60s' },
      },
    },
    budget: {
      comment: [
        `Each trial restarts the engine (start-up ~${Math.round(startMin * 60)} s) and benchmarks ~${BENCH_MIN_PER_TRIAL} min; the adaptive search`,
        `usually stops well before ${TRIALS} trials. hours counts running time only (not time spent interrupted).`,
      ],
      value: { trials: TRIALS, hours: `${hours}h` },
    },
    store: {
      comment: ['campaign history (SQLite) on this machine; `spectune tune --resume` continues from it'],
      value: './spectune.db',
    },
  };
  return {
    yaml: renderYaml(header(f, stopNeed), doc),
    space: dims.map((d) => d.key),
    levels: lv.levels,
    readyMinutes: ready,
  };
}
