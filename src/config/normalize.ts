// Second step of the config pipeline: resolve units ("90%", "2h", "16GiB"), expand ranges, apply derived defaults.
import type { ParamValue } from '../engines/types.js';
import type { MetricName, RawConfig } from './schema.js';
import type { Dimension, Problems, SpectuneConfig } from './types.js';
import { normalizeUnitName } from '../unit-name.js';
import type { SlurmTargetConfig } from './schema-slurm.js';
import { isPercent, parseBytes, parseDurationMs, parseRatio } from './units.js';

// A range that expands to more values than this is almost surely a typo (step 0.001 instead of 0.01).
export const MAX_DIMENSION_VALUES = 1000;
// Float ranges (mem_fraction_static 0.80..0.90 step 0.02) must not accumulate 0.8200000001.
const RANGE_DECIMALS = 6;

// Metrics where smaller is better; everything else is a throughput.
export function isLatencyMetric(metric: MetricName): boolean {
  return /^(ttftMs|itlMs|e2eMs)\./.test(metric);
}

// Expand {min,max,step} into its values; null when it would be empty or huge.
export function expandRange(min: number, max: number, step: number): number[] | null {
  if (max < min || step <= 0) return null;
  const n = Math.floor((max - min) / step + 1e-9) + 1;
  if (n > MAX_DIMENSION_VALUES) return null;
  return Array.from({ length: n }, (_, i) => Number((min + i * step).toFixed(RANGE_DECIMALS)));
}

// The canonical snake_case key of a setting written as a flag ("--speculative-num-steps") or in kebab-case.
export function canonicalKey(written: string): string {
  return /^(--)?[A-Za-z][A-Za-z0-9_-]*$/.test(written)
    ? written.replace(/^--/, '').replace(/-/g, '_').toLowerCase()
    : written;
}

// Turn the raw space map into ordered dimensions, reporting bad ranges.
function normalizeSpace(space: RawConfig['space'], p: Problems): Dimension[] {
  const dims: Dimension[] = [];
  for (const [written, dim] of Object.entries(space)) {
    const key = canonicalKey(written);
    if (key !== written)
      p.warnings.push(
        `space.${written}: read as ${key} (settings are named in snake_case, e.g. speculative_num_steps)`,
      );
    if ('values' in dim) {
      dims.push({ key, values: [...new Set<ParamValue>(dim.values)] });
      continue;
    }
    const values = expandRange(dim.min, dim.max, dim.step);
    if (!values) {
      p.errors.push(
        `space.${written}: expected min <= max and at most ${MAX_DIMENSION_VALUES} values, got min ${dim.min}, max ${dim.max}, step ${dim.step} (example: {min: 1, max: 10, step: 1})`,
      );
      continue;
    }
    dims.push({ key, values });
  }
  return dims;
}

// Read a duration or push an error naming the path.
function durationOr(path: string, v: number | string, p: Problems, bare: 's' | 'h' = 's'): number {
  const ms = parseDurationMs(v, bare);
  if (ms === null) p.errors.push(`${path}: expected a duration such as "90s", "15m" or "2h", got ${JSON.stringify(v)}`);
  return ms ?? 0;
}

// Normalise the search section (margin may be "3%").
function normalizeSearch(s: RawConfig['search'], p: Problems): SpectuneConfig['search'] {
  const margin = parseRatio(s.noiseMargin);
  if (margin === null)
    p.errors.push(`search.noiseMargin: expected a ratio such as 0.03 or "3%", got ${JSON.stringify(s.noiseMargin)}`);
  const durationMs = s.soak.duration === undefined ? null : durationOr('search.soak.duration', s.soak.duration, p);
  return {
    strategy: s.strategy,
    noiseMargin: margin ?? 0,
    repeats: s.repeats,
    soak: { repeats: s.soak.repeats, durationMs },
    seed: s.seed,
  };
}

// Normalise constraints: "90%" (or relativeTo: baseline) becomes a ratio of the baseline.
function normalizeConstraints(raw: RawConfig, p: Problems): SpectuneConfig['constraints'] {
  return raw.constraints.map((c, i) => {
    const relative = isPercent(c.value) || c.relativeTo === 'baseline';
    const value = parseRatio(c.value);
    if (value === null)
      p.errors.push(
        `constraints.${i}.value: expected a number or a percentage such as "90%", got ${JSON.stringify(c.value)}`,
      );
    return {
      metric: c.metric,
      concurrency: c.concurrency ?? raw.objective.concurrency,
      op: c.op,
      value: value ?? 0,
      relative,
    };
  });
}

/** Where a `manager: process` target keeps its units and state when the config names no processDir. */
const DEFAULT_PROCESS_DIR = './spectune-procman';

// Normalise the slurm section: durations become numbers (time limit in whole minutes, as sbatch --time reads it).
function normalizeSlurm(s: NonNullable<RawConfig['target']['slurm']>, p: Problems): SlurmTargetConfig {
  const limitMs = durationOr('target.slurm.timeLimit', s.timeLimit, p);
  return {
    login: s.login ?? null,
    partition: s.partition ?? null,
    nodes: s.nodes,
    gpusPerTrial: s.gpusPerTrial ?? null,
    cpusPerTask: s.cpusPerTask ?? null,
    mem: s.mem,
    timeLimitMin: Math.max(1, Math.ceil(limitMs / 60_000)),
    command: s.command,
    rank1Command: s.rank1Command ?? null,
    output: s.output,
    chdir: s.chdir ?? null,
    parallel: s.parallel ?? null,
    nodeAddresses: s.nodeAddresses ?? {},
    drainSec: durationOr('target.slurm.drain', s.drain, p) / 1000,
    startTimeoutMs: durationOr('target.slurm.startTimeout', s.startTimeout, p),
    env: s.env ?? {},
    confirmElsewhere: s.confirmElsewhere,
  };
}

// Normalise the target section: hosts get a role, gpuMemory becomes bytes.
function normalizeTarget(t: RawConfig['target'], p: Problems): SpectuneConfig['target'] {
  let gpuMemoryBytes: number | null = null;
  if (t.gpuMemory !== undefined) {
    gpuMemoryBytes = parseBytes(t.gpuMemory);
    if (gpuMemoryBytes === null)
      p.errors.push(`target.gpuMemory: expected a size such as "96GiB", got ${JSON.stringify(t.gpuMemory)}`);
  }
  // Units of systemd and the process manager follow the one unit-name rule; another manager's names are its own.
  const unitRule = t.manager === 'systemd' || t.manager === 'process';
  const hosts = t.hosts.map(
    (h, i) =>
      ({
        host: h.host ?? null,
        unit: unitRule ? normalizeHostUnit(h.unit, i, p) : h.unit,
        role: h.role ?? (i === 0 ? 'rank0' : 'rank1'),
      }) as const,
  );
  const leaseMs = durationOr('target.lease', t.lease, p);
  const drainTimeoutMs = durationOr('target.drainTimeout', t.drainTimeout, p);
  const hooks = {
    preStop: t.hooks?.preStop ?? [],
    postReady: t.hooks?.postReady ?? [],
    timeoutMs: t.hooks ? durationOr('target.hooks.timeout', t.hooks.timeout, p) : 60_000,
  };
  return {
    hosts,
    engine: t.engine,
    endpoint: t.endpoint,
    apiKey: t.apiKey ?? null,
    apiKeyEnv: t.apiKeyEnv ?? null,
    manager: t.manager,
    processDir: t.processDir ?? DEFAULT_PROCESS_DIR,
    gpuMemoryBytes,
    leaseMs,
    drainTimeoutMs,
    hooks,
    slurm: t.slurm ? normalizeSlurm(t.slurm, p) : null,
  };
}

// The unit of one host under the one unit-name rule (`sglang` is `sglang.service` for every command); a name that
// rule refuses is a config error.
function normalizeHostUnit(unit: string, i: number, p: Problems): string {
  try {
    return normalizeUnitName(unit);
  } catch {
    p.errors.push(
      `target.hosts[${i}].unit: expected a systemd unit name (letters, digits and ":_.@-", e.g. "sglang-qwen.service"), got ${JSON.stringify(unit)}`,
    );
    return unit;
  }
}

// Requests per level: one count for every level, or a list with one count per concurrency level.
function normalizeRequests(
  concurrency: number[],
  requests: number | number[],
  p: Problems,
): { requests: number; requestsPerLevel: number[] | null } {
  if (!Array.isArray(requests)) return { requests, requestsPerLevel: null };
  if (requests.length !== concurrency.length) {
    p.errors.push(
      `benchmark.requests: expected one count per concurrency level (${concurrency.length}), got ${requests.length}`,
    );
  }
  return { requests: Math.max(...requests), requestsPerLevel: requests };
}

// Resolve every unit of a schema-valid config; problems with units are pushed, not thrown.
export function normalizeConfig(raw: RawConfig, p: Problems): SpectuneConfig {
  const b = raw.benchmark;
  const t = b.timeouts;
  const hours =
    raw.budget.hours === undefined ? null : durationOr('budget.hours', raw.budget.hours, p, 'h') / 3_600_000;
  return {
    target: normalizeTarget(raw.target, p),
    space: normalizeSpace(raw.space, p),
    search: normalizeSearch(raw.search, p),
    objective: {
      ...raw.objective,
      goal: raw.objective.goal ?? (isLatencyMetric(raw.objective.metric) ? 'minimize' : 'maximize'),
    },
    constraints: normalizeConstraints(raw, p),
    benchmark: {
      concurrency: b.concurrency,
      ...normalizeRequests(b.concurrency, b.requests, p),
      inputTokens: b.inputTokens,
      outputTokens: b.outputTokens,
      warmup: b.warmup,
      timeouts: {
        readyMs: durationOr('benchmark.timeouts.ready', t.ready, p),
        connectMs: durationOr('benchmark.timeouts.connect', t.connect, p),
        firstTokenMs: durationOr('benchmark.timeouts.firstToken', t.firstToken, p),
        stallMs: durationOr('benchmark.timeouts.stall', t.stall, p),
        totalMs: durationOr('benchmark.timeouts.total', t.total, p),
      },
    },
    budget: { trials: raw.budget.trials, hours },
    store: raw.store,
  };
}
