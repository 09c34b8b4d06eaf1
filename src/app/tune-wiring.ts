// Builds the campaign's ports from a validated config: store, service controllers (one per host), benchmark and search.
import { resolve } from 'node:path';
import { orderRanks, resolveApiKeyInfo, type SpectuneConfig } from '../config/index.js';
import { ToolError } from '../errors.js';
import { guardGroupChange } from './group-guard.js';
import { assertSqliteFile } from '../local-files.js';
import type { EventSink } from '../tune/events.js';
import { openHost, type Host } from '../host/index.js';
import {
  actionLogOverride,
  createCampaignActionLog,
  createFileActionLog,
  createMemoryActionLog,
  createServiceController,
  tagRankEvents,
  type ActionLog,
  type ServiceController,
} from '../service/index.js';
import { guardDiskFull, openStore, type Db } from '../store/index.js';
import { createBenchPort } from './tune-bench.js';
import type { TuneDeps, TuneSearchPort, TuneSpec } from './tune-ports.js';
import { createControllerServicePort } from './tune-service.js';
import { createMultiHostServicePort, withoutRankDiagnoses } from './tune-service-multi.js';
import { createSqliteTuneStore } from './tune-store.js';
import { createSearchPort } from './tune-search.js';
import { openProcmanTarget } from './tune-procman.js';

/** Everything a campaign run holds open; close() releases it. */
export interface CampaignWiring {
  deps: TuneDeps;
  spec: TuneSpec;
  db: Db;
  /** rank0's host and controller (the only ones of a single-host target). */
  host: Host;
  controller: ServiceController;
  /** Every rank's controller, rank0 first. */
  controllers: ServiceController[];
  close(): Promise<void>;
}

/** Overrides for callers that are not the plain CLI (the demo, tests). */
export interface WiringOptions {
  env: NodeJS.ProcessEnv;
  /** Directory the config's relative paths (store) resolve against. */
  baseDir: string;
  /** ssh_config file for the hosts (the test hosts). */
  sshConfig?: string;
  /** One action log file for the run (--action-log), over $SPECTUNE_ACTION_LOG; default: the campaign's, next to the store. */
  actionLogPath?: string;
  onEvent: EventSink;
  /** Replace the service port (the demo's process manager binding). */
  servicePort?: TuneDeps['service'];
  search?: TuneSearchPort;
  /** Deploy a probe the memory predictor refuses, once, to confirm the prediction. */
  confirmProbes?: boolean;
  /** A dry run writes nothing: the store is in memory, actions are not logged to a file, a `manager: process` target is not started. */
  dryRun?: boolean;
  /** The campaign runs on spectune's simulated engine (the demo): recorded in the campaign so reports say so. */
  simulated?: boolean;
}

// The campaign spec (goals, limits) a config asks for.
export function specFromConfig(cfg: SpectuneConfig): TuneSpec {
  const first = cfg.target.hosts[0];
  return {
    name: `${first?.host ?? 'local'}:${first?.unit ?? '?'}`,
    keys: cfg.space.map((d) => d.key),
    objective: cfg.objective,
    constraints: cfg.constraints,
    budget: { maxTrials: cfg.budget.trials, maxHours: cfg.budget.hours ?? Number.POSITIVE_INFINITY },
    noiseMargin: cfg.search.noiseMargin,
  };
}

// The API key for the endpoint: inline in the config, or from the named environment variable.
export function resolveApiKey(cfg: SpectuneConfig, env: NodeJS.ProcessEnv): string | null {
  return resolveApiKeyInfo(cfg.target, env).key;
}

// The run's action log: in memory for a dry run, the override file, else the campaign's own file next to the store
// (bound to the campaign once the store has opened it).
function openCampaignActionLog(
  opts: WiringOptions,
  store: string,
): { actionLog: ActionLog; bind: (id: number) => void } {
  if (opts.dryRun) return { actionLog: createMemoryActionLog(), bind: () => {} };
  const override = actionLogOverride(opts.actionLogPath, opts.env);
  if (override) return { actionLog: createFileActionLog(override), bind: () => {} };
  const log = createCampaignActionLog(store);
  return { actionLog: log, bind: (id) => log.bind(id) };
}

// The store port, telling the action log which campaign it opened (a new one or the one resumed).
function bindActionLog(store: TuneDeps['store'], bind: (id: number) => void): TuneDeps['store'] {
  return {
    ...store,
    openCampaign: (o) => {
      const c = store.openCampaign(o);
      bind(c.id);
      return c;
    },
  };
}

// Open everything a campaign needs; the caller closes it.
export async function wireCampaign(cfg: SpectuneConfig, opts: WiringOptions): Promise<CampaignWiring> {
  const first = cfg.target.hosts[0];
  if (!first) throw new ToolError('E_CONFIG_INVALID', 'target.hosts: expected at least one host');
  if (!opts.dryRun) assertSqliteFile('store', resolve(opts.baseDir, cfg.store), false);
  const ranks = orderRanks(cfg.target.hosts);
  const hosts: Host[] = [];
  const procman =
    cfg.target.manager === 'process' && !opts.servicePort
      ? await openProcmanTarget(cfg, opts.baseDir, opts.onEvent, { dryRun: opts.dryRun })
      : null;
  const closeHosts = async () => {
    await Promise.all(hosts.map((h) => h.close().catch(() => {})));
    await procman?.close();
  };
  try {
    if (procman) hosts.push(procman.host);
    else for (const r of ranks) hosts.push(await openHost({ target: r.host ?? undefined, sshConfig: opts.sshConfig }));
    // A campaign restarts every rank it lists: a multi-node unit whose other ranks the config leaves out is refused.
    if (cfg.target.manager === 'systemd' && !opts.servicePort)
      await guardGroupChange(
        ranks.map((r, i) => ({ host: hosts[i], unit: r.unit, rank: i })),
        cfg.target.engine,
        'tune',
        { rankPicked: false, rankFlag: false, onEvent: opts.onEvent },
      );
  } catch (e) {
    await closeHosts();
    throw e;
  }
  const db = openStore(opts.dryRun ? ':memory:' : resolve(opts.baseDir, cfg.store));
  const { actionLog, bind } = openCampaignActionLog(opts, resolve(opts.baseDir, cfg.store));
  const multi = ranks.length > 1;
  // With several ranks the group port emits the one verdict over all journals; the per-rank ones would contradict it.
  const onEvent = multi ? withoutRankDiagnoses(opts.onEvent) : opts.onEvent;
  // The lease is a transient systemd timer on the host: a `manager: process` target has no systemd to hold it.
  const lease = cfg.target.leaseMs > 0 && cfg.target.manager !== 'process' ? { ms: cfg.target.leaseMs } : undefined;
  const apiKey = resolveApiKey(cfg, opts.env);
  const ctls = ranks.map((r, i) =>
    createServiceController({
      host: hosts[i],
      unit: r.unit,
      engine: cfg.target.engine,
      endpoint: cfg.target.endpoint,
      onEvent: multi ? tagRankEvents(onEvent, i, hosts[i].name) : onEvent,
      actionLog,
      readyTimeoutMs: cfg.benchmark.timeouts.readyMs,
      lease,
      apiKey,
      maxDrainWaitMs: cfg.target.drainTimeoutMs,
      hooks: cfg.target.hooks,
      drainOutputTokens: cfg.benchmark.outputTokens,
    }),
  );
  const ctl = ctls[0];
  const service = multi
    ? createMultiHostServicePort({
        ranks: ctls,
        endpoint: cfg.target.endpoint,
        engine: cfg.target.engine,
        onEvent: opts.onEvent,
        actionLog,
        lease,
      })
    : createControllerServicePort(ctl, actionLog);
  const deps: TuneDeps = {
    service: opts.servicePort ?? service,
    bench: createBenchPort(cfg, apiKey, resolveApiKeyInfo(cfg.target, opts.env).fix),
    search: opts.search ?? createSearchPort(cfg, { confirmProbes: opts.confirmProbes }),
    store: bindActionLog(guardDiskFull(createSqliteTuneStore(db, cfg.target.engine), db.name), bind),
    now: Date.now,
  };
  return {
    deps,
    spec: {
      ...specFromConfig(cfg),
      confirmFirstRefusal: opts.confirmProbes === true,
      ...(opts.simulated ? { simulated: true } : {}),
      ...(opts.dryRun ? {} : { storePath: db.name }),
    },
    db,
    host: hosts[0],
    controller: ctl,
    controllers: ctls,
    close: async () => {
      db.close();
      await closeHosts();
    },
  };
}
