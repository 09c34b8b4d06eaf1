// The demo's pure inputs: the simulated engine's unit (as an operator would write it) and the campaign config.
import { quoteSystemdWord } from '../engines/index.js';

/** The unit the demo creates under the process manager. */
export const DEMO_UNIT = 'spectune-demo-sim.service';
/** The seed's profile (Qwen3.5-122B-A10B on two nodes) and its model path. */
export const DEMO_PROFILE = 'qwen3.5-122b-a10b-2node';
const DEMO_MODEL = 'Qwen/Qwen3.5-122B-A10B-FP8';
/** ~100 s model loads become ~1 s: the whole campaign (about ten restarts) fits in well under two minutes. */
export const DEMO_TIME_SCALE = 0.01;
/** The operator's config before tuning: steps=3 (the seed's third measurement); the climb then meets the plateau
 * at 4-6, probes steps=10 "to see if it unplateaus", and crashes exactly as the seed did. */
export const DEMO_START_STEPS = 3;

/** The batch the constraint protects: a single user's speed must not cost the aggregate throughput of four users
 * (steps=8 leaves room for max_running_requests=1 only, and is rejected by it). */
export const DEMO_BATCH = 4;

/** Where the demo's pieces live. */
export interface DemoLayout {
  node: string;
  bin: string;
  port: number;
  timeScale: number;
}

// The unit file text of the simulated engine (Restart=always, as the seed's unit: a failing start crash-loops).
export function renderDemoUnit(l: DemoLayout): string {
  const argv = [
    l.node,
    l.bin,
    'sim',
    '--sim-profile',
    DEMO_PROFILE,
    '--sim-time-scale',
    String(l.timeScale),
    '--model-path',
    DEMO_MODEL,
    '--host',
    '127.0.0.1',
    '--port',
    String(l.port),
    '--tp-size',
    '2',
    '--speculative-algorithm',
    'EAGLE',
    '--speculative-num-steps',
    String(DEMO_START_STEPS),
    '--speculative-eagle-topk',
    '1',
  ];
  return [
    '[Unit]',
    'Description=SIMULATED SGLang engine (spectune sim) for spectune demo',
    '',
    '[Service]',
    `ExecStart=${argv.map((a) => quoteSystemdWord(a)).join(' ')}`,
    'Restart=always',
    'RestartSec=1',
    'TimeoutStopSec=10',
    '',
  ].join('\n');
}

// The campaign config of the demo (validated by the config module like any spectune.yaml).
export function buildDemoConfig(port: number, store: string): Record<string, unknown> {
  return {
    target: {
      engine: 'sglang',
      endpoint: `http://127.0.0.1:${port}`,
      manager: 'process',
      hosts: [{ unit: DEMO_UNIT }],
    },
    space: { speculative_num_steps: { min: 1, max: 10 } },
    search: { strategy: 'adaptive', noiseMargin: '4%', repeats: 2, soak: { repeats: 1 } },
    objective: { metric: 'decodeTokensPerSec.mean', concurrency: 1 },
    constraints: [
      { metric: 'outputTokensPerSec', concurrency: DEMO_BATCH, op: '>=', value: '90%', relativeTo: 'baseline' },
    ],
    benchmark: {
      concurrency: [1, DEMO_BATCH],
      requests: 4,
      inputTokens: 128,
      outputTokens: 160,
      warmup: 0,
      timeouts: { ready: '60s', firstToken: '30s', stall: '10s', total: '60s' },
    },
    budget: { trials: 12, hours: '10m' },
    store,
  };
}
