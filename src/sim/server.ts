// startSim: one simulated SGLang launch — start-up timeline, HTTP server, warm-up, drain on SIGTERM, faults, death.
import { createServer, type Server } from 'node:http';
import { ToolError } from '../errors.js';
import { parseSglangArgs, renderArgError } from './argv.js';
import { loadProfile } from './profiles-io.js';
import { planLaunch, type LaunchPlan } from './options.js';
import { computeCapacity, type CapacityOk } from './model.js';
import { SimLogger, type LogSink } from './logger.js';
import { logLaunch, runStartup } from './startup.js';
import { Scheduler, type SchedulerFault } from './scheduler.js';
import { handleRequest, type SimContext } from './http.js';
import { formatGracefulExit, formatUvicorn, READY_MSG, SIGTERM_MSG } from './log-format.js';
import { renderAddressInUse } from './traceback.js';
import { createFaultHandlers, startDist } from './faults.js';
import { parseDistAddr } from './dist.js';
import type { SimProfile } from './profile.js';

/** How a simulated run ended; the CLI turns signals into a real self-kill. */
export type SimExit = { kind: 'exit'; code: number } | { kind: 'signal'; signal: 'SIGKILL' | 'SIGABRT' | 'SIGTERM' };

/** A running simulator. */
export interface SimHandle {
  /** Bound HTTP port (0 until listening). */
  readonly port: number;
  listening: Promise<number>;
  ready: Promise<void>;
  exited: Promise<SimExit>;
  logger: SimLogger;
  /** Deliver SIGTERM (the CLI forwards the real signal here). */
  sigterm(): void;
  /** Stop everything at once (tests). */
  close(): Promise<void>;
}

/** Options of startSim. */
export interface StartSimOptions {
  sink?: LogSink;
  env?: NodeJS.ProcessEnv;
}

/** SGLang's sigterm_watchdog polling period (s, before time scaling). */
const DRAIN_POLL_S = 5;
/** SGLang's warm-up polls /get_model_info once a second. */
const WARMUP_POLL_MS = 1000;
/** Host memory held per simulated GB with --sim-hold-memory (MiB): a 60 GB load holds 120 MiB. */
const HOLD_MIB_PER_GB = 2;

/** Mutable state of one run, shared with the fault handlers. */
export interface RunState {
  plan: LaunchPlan;
  profile: SimProfile;
  logger: SimLogger;
  ctx: SimContext | null;
  timers: Set<NodeJS.Timeout>;
  closed: boolean;
  finish: (e: SimExit) => void;
  sleep: (ms: number) => Promise<boolean>;
  cleanups: (() => void)[];
}

// Parse flags and start one simulated launch; throws E_SIM_ARGS with argparse's exact text on bad flags.
export function startSim(argv: string[], opts: StartSimOptions = {}): SimHandle {
  const parsed = parseSglangArgs(argv);
  if (!parsed.ok) throw new ToolError('E_SIM_ARGS', renderArgError(parsed.error));
  const profile = loadProfile((parsed.args.sim_profile as string | undefined) ?? undefined);
  const planned = planLaunch(profile, parsed.args, opts.env ?? process.env);
  if (!planned.ok) throw new ToolError('E_SIM_ARGS', renderArgError(planned.error));
  const plan = planned.plan;
  if (plan.settings.nnodes > 1 && !parseDistAddr(plan.distInitAddr ?? '')) {
    throw new ToolError(
      'E_SIM_ARGS',
      renderArgError(`--dist-init-addr HOST:PORT is required when --nnodes > 1 (got ${plan.distInitAddr ?? 'none'})`),
    );
  }
  const logger = new SimLogger(opts.sink ?? ((t) => process.stdout.write(t)), plan.settings.tpSize);
  return launch(plan, profile, logger);
}

// Wire the run state, start the timeline, and expose the handle.
function launch(plan: LaunchPlan, profile: SimProfile, logger: SimLogger): SimHandle {
  let port = 0;
  let resolveExit!: (e: SimExit) => void;
  const exited = new Promise<SimExit>((r) => (resolveExit = r));
  let resolveListening!: (p: number) => void;
  const listening = new Promise<number>((r) => (resolveListening = r));
  let resolveReady!: () => void;
  const ready = new Promise<void>((r) => (resolveReady = r));
  const held: Buffer[] = [];
  const st: RunState = {
    plan,
    profile,
    logger,
    ctx: null,
    timers: new Set(),
    closed: false,
    cleanups: [],
    finish: (e) => {
      if (st.closed) return;
      st.closed = true;
      for (const t of st.timers) clearTimeout(t);
      st.ctx?.scheduler.stop();
      for (const c of st.cleanups) c();
      held.length = 0;
      resolveExit(e);
    },
    sleep: (ms) =>
      new Promise((r) => {
        if (st.closed) return r(false);
        const t = setTimeout(() => {
          st.timers.delete(t);
          r(!st.closed);
        }, ms);
        st.timers.add(t);
      }),
  };
  const onAllocate = (gb: number) => {
    if (plan.holdMemory) held.push(Buffer.alloc(Math.ceil(gb * HOLD_MIB_PER_GB) * 1024 * 1024, 1));
  };
  const drain = createDrain(st);
  void runLaunch(
    st,
    onAllocate,
    (p) => {
      port = p;
      resolveListening(p);
    },
    resolveReady,
    drain.install,
  ).catch((e) => {
    logger.main(`spectune sim internal error: ${(e as Error).stack ?? e}`);
    st.finish({ kind: 'exit', code: 1 });
  });
  return {
    get port() {
      return port;
    },
    listening,
    ready,
    exited,
    logger,
    sigterm: drain.sigterm,
    close: async () => {
      st.finish({ kind: 'exit', code: 0 });
      await exited;
    },
  };
}

// The launch sequence: banner, start-up, then (rank 0) HTTP, warm-up and readiness.
async function runLaunch(
  st: RunState,
  onAllocate: (gb: number) => void,
  onListening: (p: number) => void,
  onReady: () => void,
  installSigterm: () => void,
): Promise<void> {
  const { plan, profile, logger } = st;
  logLaunch({ plan, logger, profile });
  const capacity = computeCapacity(profile, plan.settings);
  const faults = createFaultHandlers(st);
  const loadMs = profile.timing.load_seconds * 1000 * plan.timeScale;
  const res = await runStartup({
    plan,
    profile,
    capacity,
    logger,
    onAllocate,
    now: () => performance.now(),
    wait: (share) => st.sleep(share * loadMs),
    joinDist: () => startDist(st, faults),
  });
  if (res.kind === 'closed') return;
  if (res.kind === 'not_enough_memory') return st.finish({ kind: 'exit', code: 1 });
  if (plan.nodeRank > 0) return; // non-zero ranks serve no HTTP; they live until rank 0 goes away
  st.ctx = createContext(st, res.capacity, faults.onSchedulerFault);
  const server = createServer((req, res2) => {
    void handleRequest(st.ctx!, req, res2).catch(() => res2.destroy());
  });
  st.cleanups.push(() => {
    server.close();
    server.closeAllConnections();
  });
  const bound = await listen(st, server);
  if (bound === null) return;
  onListening(bound);
  await warmUp(st, bound, installSigterm);
  if (st.closed) return;
  st.ctx.status = 'ready';
  logger.main(READY_MSG);
  onReady();
}

function createContext(st: RunState, capacity: CapacityOk, onFault: (f: SchedulerFault) => void): SimContext {
  const { plan, profile, logger } = st;
  const scheduler = new Scheduler({
    profile,
    settings: plan.settings,
    capacity,
    logger,
    now: () => performance.now(),
    seed: plan.seed,
    decodeLogInterval: plan.decodeLogInterval,
    faults: {
      crashAfter: plan.faults.crash_after,
      cudaOomBatch: plan.faults.cuda_oom_batch,
      hangAfter: plan.faults.hang_after,
    },
    onFault,
  });
  return {
    status: 'starting',
    logger,
    scheduler,
    profile,
    settings: plan.settings,
    capacity,
    serverArgs: plan.serverArgs,
    modelPath: plan.modelPath,
    servedModelName: plan.servedModelName,
    apiKey: plan.apiKey,
    timeScale: plan.timeScale,
    startedAt: Date.now(),
    unhealthy: false,
  };
}

// uvicorn start: its lifespan lines, then bind (EADDRINUSE → uvicorn's error, lifespan shutdown, exit 1); returns the port.
function listen(st: RunState, server: Server): Promise<number | null> {
  const { logger, plan } = st;
  logger.uvicorn(`Started server process [${process.pid}]`);
  logger.uvicorn('Waiting for application startup.');
  logger.uvicorn('Application startup complete.');
  return new Promise((resolve) => {
    server.once('error', (e: NodeJS.ErrnoException) => {
      logger.main(
        formatUvicorn(
          e.code === 'EADDRINUSE' ? renderAddressInUse(plan.host, plan.port) : `[Errno] ${e.message}`,
          'ERROR',
        ),
      );
      logger.uvicorn('Waiting for application shutdown.');
      logger.uvicorn('Application shutdown complete.');
      st.finish({ kind: 'exit', code: 1 });
      resolve(null);
    });
    server.listen(plan.port, plan.host, () => {
      const addr = server.address();
      const port = typeof addr === 'object' && addr ? addr.port : plan.port;
      logger.uvicorn(
        `Uvicorn running on http://${plan.host.includes(':') ? `[${plan.host}]` : plan.host}:${port} (Press CTRL+C to quit)`,
      );
      resolve(port);
    });
  });
}

// SGLang's _wait_and_warmup: poll /get_model_info, then one /generate over real HTTP.
async function warmUp(st: RunState, port: number, installSigterm: () => void): Promise<void> {
  const host = st.plan.host === '0.0.0.0' || st.plan.host === '::' ? '127.0.0.1' : st.plan.host;
  const base = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-spectune-sim-internal': '1' };
  if (st.plan.apiKey) headers.authorization = `Bearer ${st.plan.apiKey}`;
  const remaining = 1 - 0.88;
  if (!(await st.sleep(st.profile.timing.load_seconds * 1000 * st.plan.timeScale * remaining))) return;
  while (!st.closed) {
    const r = await fetch(`${base}/get_model_info`, { headers }).catch(() => null);
    if (r?.ok) break;
    if (!(await st.sleep(WARMUP_POLL_MS * st.plan.timeScale))) return;
  }
  installSigterm();
  if (st.plan.skipWarmup || st.closed) return;
  const body = JSON.stringify({
    text: 'The capital city of France is',
    sampling_params: { temperature: 0, max_new_tokens: 8 },
  });
  const r = await fetch(`${base}/generate`, { method: 'POST', headers, body }).catch((e: Error) => e);
  if (!(r instanceof Response) || !r.ok) {
    if (st.closed) return;
    st.logger.main(`Initialization failed. warmup error: ${r instanceof Response ? `status ${r.status}` : r.message}`);
    st.finish({ kind: 'signal', signal: 'SIGKILL' });
  }
}

// SIGTERM as SGLang handles it: default death before the handler exists, then drain with 5 s progress lines.
function createDrain(st: RunState): { install: () => void; sigterm: () => void } {
  let installed = false;
  const poll = async () => {
    while (await st.sleep(DRAIN_POLL_S * 1000 * st.plan.timeScale)) {
      if (st.ctx?.status !== 'draining') continue;
      if (st.ctx.unhealthy) {
        st.logger.main('Signal SIGTERM received while health check failed. Force exiting.');
        return st.finish({ kind: 'signal', signal: 'SIGKILL' });
      }
      const rids = st.ctx.scheduler.remainingRids();
      st.logger.main(formatGracefulExit(rids));
      if (!rids.length) return st.finish({ kind: 'signal', signal: 'SIGKILL' });
    }
  };
  return {
    install: () => {
      installed = true;
      void poll();
    },
    sigterm: () => {
      if (!installed || !st.ctx) return st.finish({ kind: 'signal', signal: 'SIGTERM' });
      if (st.ctx.status === 'draining') return;
      st.logger.main(SIGTERM_MSG);
      st.ctx.status = 'draining';
    },
  };
}
