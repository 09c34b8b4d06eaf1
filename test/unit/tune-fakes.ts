// Fakes of the campaign's ports: a service whose speed depends on speculative_num_steps and that crash-loops at
// start-up past a memory boundary, an in-memory store, and a grid proposer. Used by the tune unit tests.
import type { BenchRun } from '../../src/bench/types.js';
import type { Verdict } from '../../src/diagnose/types.js';
import type { StoredCampaign, TuneDeps, TuneSpec } from '../../src/app/tune-ports.js';
import type { TrialRecord, TuneConfig } from '../../src/tune/types.js';
import { configKey } from '../../src/tune/best.js';
import { sumActiveMs, type RunSpan } from '../../src/tune/active-time.js';

/** The seed's per-request decode tok/s at concurrency 1, steps 1..9 (10 fails). */
export const SEED_TPS: Record<number, number> = {
  1: 123,
  2: 186,
  3: 234,
  4: 277,
  5: 282,
  6: 279,
  7: 272,
  8: 265,
  9: 258,
};

// A BenchRun with the given per-request decode tok/s at concurrency 1.
export function makeRun(tps: number, concurrency = 1): BenchRun {
  const s = { mean: tps, p50: tps, p90: tps, p99: tps };
  const lat = { mean: 50, p50: 50, p90: 60, p99: 70 };
  return {
    concurrency,
    rate: null,
    requests: { ok: 4, failed: 0 },
    durationMs: 1000,
    outputTokensPerSec: tps * concurrency,
    requestsPerSec: 1,
    ttftMs: lat,
    itlMs: lat,
    e2eMs: lat,
    decodeTokensPerSec: s,
    acceptLength: null,
    usageFromServer: true,
    errors: { connect: 0, httpStatus: 0, firstTokenTimeout: 0, stall: 0, endedEarly: 0, other: 0 },
    engine: { before: null, after: null },
    stoppedEarly: null,
  };
}

const OOM_VERDICT: Verdict = {
  class: 'crash_loop',
  cause: 'kv_cache_oom',
  confidence: 'high',
  summary: 'every start dies of Not enough memory',
  evidence: [{ line: 1, text: 'RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.' }],
  ruledOut: [],
  remediation: [],
};

/** A fake world: the service state and a log of what was done to it. */
export interface FakeWorld {
  current: TuneConfig;
  lastGood: TuneConfig;
  actions: string[];
  deploys: number;
  /** Called before each bench run; throw or abort from here to simulate an interruption. */
  beforeBench?: (phase: string) => void;
  stores: Map<number, TrialRecord[]>;
  /** Run spans by campaign, as the SQLite store keeps them. */
  spans: Map<number, RunSpan[]>;
}

// Create the fake world with the service on steps=1 (the seed's default).
export function createWorld(): FakeWorld {
  return {
    current: { speculative_num_steps: 1 },
    lastGood: { speculative_num_steps: 1 },
    actions: [],
    deploys: 0,
    stores: new Map(),
    spans: new Map(),
  };
}

// Ports bound to the fake world; `failFrom` is the first step count that crash-loops; the clock starts at `clockStart`.
export function createFakeDeps(world: FakeWorld, failFrom = 10, clockStart = 0): TuneDeps {
  let clock = clockStart;
  const steps = () => Number(world.current.speculative_num_steps);
  return {
    now: () => (clock += 1000),
    service: {
      readConfig: async () => ({ ...world.current }),
      waitHealthy: async () => ({
        healthy: steps() < failFrom,
        capacity: null,
        reason: steps() < failFrom ? 'ready' : 'crash loop',
      }),
      deploy: async (config) => {
        world.deploys++;
        world.actions.push(`deploy ${configKey(config)}`);
        world.current = { ...config };
        if (steps() >= failFrom) return { ready: false, reason: 'crash loop', verdict: OOM_VERDICT, restarts: 3 };
        return { ready: true, capacity: { maxRunningRequests: 20 - steps() }, restarts: 1 };
      },
      recover: async (why) => {
        world.actions.push(`recover: ${why}`);
        world.current = { ...world.lastGood };
      },
      markGood: async () => {
        world.lastGood = { ...world.current };
      },
      describeDeployed: async () => `ExecStart=sim --speculative-num-steps ${steps()}`,
    },
    bench: {
      run: async (phase) => {
        world.beforeBench?.(phase);
        return { runs: [makeRun(SEED_TPS[steps()] ?? 0)], samples: [] };
      },
    },
    search: {
      propose: (history) => proposeGrid(history, 10),
      predict: () => null,
    },
    store: createMemoryStore(world),
  };
}

// The grid 1..max over speculative_num_steps, skipping what was measured: the baseline search of the tests.
export function proposeGrid(history: TrialRecord[], max: number) {
  const seen = new Set(history.filter((t) => t.kind !== 'soak').map((t) => Number(t.config.speculative_num_steps)));
  for (let s = 1; s <= max; s++) if (!seen.has(s)) return { config: { speculative_num_steps: s }, reason: `grid ${s}` };
  return null;
}

// Start a run span of a campaign.
function startSpan(world: FakeWorld, id: number, now: number): void {
  world.spans.set(id, [...(world.spans.get(id) ?? []), { startedAt: now, lastActiveAt: now }]);
}

// An in-memory store keeping trials and run spans by campaign, as the SQLite one does.
function createMemoryStore(world: FakeWorld): TuneDeps['store'] {
  const finished = new Set<number>();
  return {
    openCampaign: ({ resume, now }): StoredCampaign => {
      if (resume) {
        const id = [...world.stores.keys()].filter((k) => !finished.has(k)).pop();
        if (id === undefined) throw new Error('nothing to resume');
        const trials = [...(world.stores.get(id) ?? [])];
        const activeMs = sumActiveMs(world.spans.get(id) ?? [], trials);
        startSpan(world, id, now);
        return { id, activeMs, trials, resumed: true };
      }
      const id = world.stores.size + 1;
      world.stores.set(id, []);
      startSpan(world, id, now);
      return { id, activeMs: 0, trials: [], resumed: false };
    },
    markActive: (id, now) => {
      const spans = world.spans.get(id) ?? [];
      if (spans.length) spans[spans.length - 1] = { ...spans[spans.length - 1], lastActiveAt: now };
    },
    saveTrial: (id, t) => {
      world.stores.set(id, [...(world.stores.get(id) ?? []).filter((x) => x.index !== t.index), t]);
    },
    saveSamples: () => {},
    finishCampaign: (id) => {
      finished.add(id);
    },
  };
}

/** The tune spec of the tests: maximise decode tok/s at concurrency 1 over steps. */
export const TEST_SPEC: TuneSpec = {
  name: 'fake',
  keys: ['speculative_num_steps'],
  objective: { metric: 'decodeTokensPerSec.mean', concurrency: 1, goal: 'maximize' },
  constraints: [],
  budget: { maxTrials: 20, maxHours: 1 },
  noiseMargin: 0.03,
};
