// A model of a Slurm cluster in memory (for bench/slurm-parallel.mjs in CI, where no cluster runs, and the campaign's
// unit tests): jobs go PENDING -> RUNNING on a free node, an engine answers /health on loopback after a start-up
// time, scancel and KillWait behave as Slurm 22.05's do and the job output carries slurmstepd's exact lines. Real
// time (scaled down), real HTTP; the benchmark is a sleep whose figure is the candidate's modelled speed.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BenchRun } from '../bench/types.js';
import type { Host } from '../host/index.js';
import type { TuneConfig } from '../tune/types.js';
import type { SlurmClient } from './client.js';
import type { SlurmBenchPort } from './ports.js';
import type { SlurmClusterConfig, SlurmJob, SlurmState } from './types.js';

/** The modelled cluster's behaviour. */
export interface ModelClusterOptions {
  nodes: string[];
  killWaitSec: number;
  /** Time from submit to RUNNING (scheduling, node prolog). */
  startMs: number;
  /** Time from RUNNING to the engine answering /health. */
  readyMs: number;
  /** Time the engine takes to drain after SIGTERM. */
  drainMs: number;
  /** Time one benchmark phase takes (warm-up takes a tenth). */
  benchMs: number;
  /** The candidate's measured speed on a node (tok/s). */
  speed(config: TuneConfig, node: string): number;
}

/** One modelled job. */
interface ModelJob {
  id: string;
  name: string;
  script: string;
  nodelist: string | null;
  exclude: string[];
  port: number;
  output: string;
  config: TuneConfig;
  node: string | null;
  submittedAt: number;
  runningAt: number | null;
  endedAt: number | null;
  final: { state: SlurmState; exit: string; text: string } | null;
  lines: string[];
}

/** The model and its ports. */
export interface ModelCluster {
  client: SlurmClient;
  urlFor(node: string, port: number): string;
  benchFor(url: string): SlurmBenchPort;
  /** Jobs by id, for assertions. */
  jobs: Map<string, ModelJob>;
  /** Jobs live now. */
  liveJobs(): string[];
  close(): Promise<void>;
}

// The settings a trial script carries: the flags after the engine command (--name value).
function readConfig(script: string): TuneConfig {
  const exec = /^exec (.*)$/m.exec(script)?.[1] ?? '';
  const out: TuneConfig = {};
  for (const m of exec.matchAll(/--([a-z0-9-]+)[ =](\S+)/g)) {
    const v = Number(m[2]);
    out[m[1].replace(/-/g, '_')] = Number.isFinite(v) ? v : m[2];
  }
  return out;
}

// One #SBATCH option of a script.
const opt = (script: string, k: string) => new RegExp(`^#SBATCH --${k}=(.*)$`, 'm').exec(script)?.[1] ?? null;

// A BenchRun with the given throughput at concurrency 1.
function modelRun(tps: number): BenchRun {
  const s = { mean: tps, p50: tps, p90: tps, p99: tps };
  const lat = { mean: 1000 / tps, p50: 1000 / tps, p90: 1000 / tps, p99: 1000 / tps };
  return {
    concurrency: 1,
    rate: null,
    requests: { ok: 4, failed: 0 },
    durationMs: 1000,
    outputTokensPerSec: tps,
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

// Start the model: its loopback health server listens before this resolves.
export async function createModelCluster(o: ModelClusterOptions): Promise<ModelCluster> {
  const jobs = new Map<string, ModelJob>();
  let nextId = 100;
  const now = () => Date.now();
  const stamp = () => new Date().toISOString().slice(0, 19);
  const busy = (node: string) => [...jobs.values()].some((j) => j.node === node && j.endedAt === null);
  // Advance the model to now: place pending jobs on free nodes (in submit order), end drains that finished.
  const tick = () => {
    for (const j of [...jobs.values()].sort((a, b) => a.submittedAt - b.submittedAt)) {
      if (j.final && j.endedAt !== null && j.endedAt <= now()) continue;
      if (j.node === null && j.final === null && now() - j.submittedAt >= o.startMs) {
        const node = (j.nodelist ? [j.nodelist] : o.nodes.filter((n) => !j.exclude.includes(n))).find((n) => !busy(n));
        if (node) {
          j.node = node;
          j.runningAt = now();
          j.lines.push(`spectune: job ${j.id} rank 0 on ${node} port ${j.port}`, 'model engine: loading');
        }
      }
    }
  };
  const stateOf = (j: ModelJob): { state: SlurmState; exit: string; text: string } => {
    tick();
    if (j.final && j.endedAt !== null && j.endedAt <= now()) return j.final;
    if (j.node === null) return { state: 'PENDING', exit: '0:0', text: 'PENDING' };
    return { state: 'RUNNING', exit: '0:0', text: 'RUNNING' };
  };
  const toJob = (j: ModelJob): SlurmJob => {
    const s = stateOf(j);
    return {
      jobId: j.id,
      name: j.name,
      state: s.state,
      stateText: s.text,
      exit: { code: Number(s.exit.split(':')[0]), signal: Number(s.exit.split(':')[1]) },
      nodes: j.node ? [j.node] : [],
      reason: null,
      stdout: j.output,
      start: null,
      end: null,
      stepEnd: null,
    };
  };
  const live = (j: ModelJob) => !['COMPLETED', 'CANCELLED', 'FAILED', 'TIMEOUT'].includes(stateOf(j).state);
  const server: Server = createServer((req, res) => {
    const m = /^\/([^/]+)\/(\d+)\/health$/.exec(req.url ?? '');
    const j = m ? [...jobs.values()].find((x) => x.node === m[1] && x.port === Number(m[2]) && live(x)) : undefined;
    const ready = j && j.runningAt !== null && now() - j.runningAt >= o.readyMs && !(j.final && j.endedAt !== null);
    res.writeHead(ready ? 200 : 503).end(ready ? 'ok' : 'loading');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const host: Host = {
    name: 'model-login',
    exec: async () => {
      throw new Error('model cluster: no commands');
    },
    readFile: async () => '',
    writeFile: async () => {},
    close: async () => {},
  };
  const client: SlurmClient = {
    host,
    readConfig: async (): Promise<SlurmClusterConfig> => ({
      killWaitSec: o.killWaitSec,
      accounting: true,
      clusterName: 'model',
    }),
    async listFreeNodes() {
      tick();
      return o.nodes.filter((n) => !busy(n));
    },
    async submit(script) {
      const id = String(nextId++);
      const output = (opt(script, 'output') ?? '/tmp/%j.out').replace(/%j/g, id);
      jobs.set(id, {
        id,
        name: opt(script, 'job-name') ?? 'job',
        script,
        nodelist: opt(script, 'nodelist'),
        exclude: (opt(script, 'exclude') ?? '').split(',').filter(Boolean),
        port: Number(/^export SPECTUNE_PORT=(\d+)$/m.exec(script)?.[1] ?? 0),
        output,
        config: readConfig(script),
        node: null,
        submittedAt: now(),
        runningAt: null,
        endedAt: null,
        final: null,
        lines: [],
      });
      return id;
    },
    readJob: async (id) => {
      const j = jobs.get(id);
      return j ? toJob(j) : null;
    },
    readAccounting: async (id) => {
      const j = jobs.get(id);
      return j ? { ...toJob(j), stdout: null } : null;
    },
    listLiveJobs: async (prefix) =>
      [...jobs.values()]
        .filter((j) => j.name.startsWith(prefix) && live(j))
        .map((j) => ({ jobId: j.id, state: stateOf(j).state, nodes: j.node ? [j.node] : [] })),
    async signal(id, sig) {
      const j = jobs.get(id);
      if (!j || !live(j) || j.final) return;
      j.lines.push(`SIGTERM: draining ${sig === 'TERM' ? 4 : 0} requests`);
      j.final = { state: 'COMPLETED', exit: '0:0', text: 'COMPLETED' };
      j.endedAt = now() + o.drainMs;
    },
    async cancel(id) {
      const j = jobs.get(id);
      if (!j || !live(j)) return;
      if (j.node === null) {
        j.final = { state: 'CANCELLED', exit: '0:0', text: 'CANCELLED by 0' };
        j.endedAt = now();
        return;
      }
      j.lines.push(`slurmstepd-${j.node}: error: *** JOB ${j.id} ON ${j.node} CANCELLED AT ${stamp()} ***`);
      if (j.final) return;
      const cut = o.drainMs > o.killWaitSec * 1000;
      if (cut) j.lines.push('SIGTERM: draining 4 requests');
      j.final = { state: 'CANCELLED', exit: cut ? '0:9' : '0:15', text: 'CANCELLED by 0' };
      j.endedAt = now() + Math.min(o.drainMs, o.killWaitSec * 1000);
    },
    readOutput: async (path) => {
      const j = [...jobs.values()].find((x) => x.output === path);
      return j ? `${j.lines.join('\n')}\n` : null;
    },
  };
  return {
    client,
    jobs,
    urlFor: (node, port) => `${base}/${node}/${port}`,
    benchFor(url) {
      const [, node, port] = /\/([^/]+)\/(\d+)$/.exec(url) ?? [];
      return {
        async run(phase, _onEvent, signal) {
          await sleep(phase === 'warmup' ? o.benchMs / 10 : o.benchMs, undefined, { signal });
          const j = [...jobs.values()].find((x) => x.node === node && x.port === Number(port) && live(x));
          if (!j) throw new Error(`no engine answers on ${node}:${port}`);
          return { runs: [modelRun(o.speed(j.config, node))], samples: [] };
        },
      };
    },
    liveJobs: () => [...jobs.values()].filter(live).map((j) => j.id),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
