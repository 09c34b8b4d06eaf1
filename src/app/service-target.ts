// Which service the status/apply/rollback/logs commands act on: flags first, then spectune.yaml `target`;
// opens the host and builds the service controller.
import { existsSync } from 'node:fs';
import { dirname, resolve as resolvePath } from 'node:path';
import { resolveApiKeyInfo } from '../config/api-key.js';
import { guardGroupChange } from './group-guard.js';
import { orderRanks } from '../config/ranks.js';
import { ToolError } from '../errors.js';
import { DEFAULT_PORTS, ENGINE_NAMES } from '../engines/registry.js';
import type { EngineName } from '../engines/types.js';
import type { EventSink } from '../tune/events.js';
import { openHost } from '../host/open.js';
import type { Host } from '../host/types.js';
import { runArgv } from '../host/local.js';
import {
  createFileActionLog,
  createMemoryActionLog,
  DEFAULT_ACTION_LOG,
  LEGACY_ACTION_LOG,
  resolveActionLogPath,
} from '../service/action-log.js';
import {
  DEFAULT_LEASE_MS,
  createServiceController,
  type EndpointSource,
  type RestartHooks,
  createServiceGroup,
  tagRankEvents,
  withoutRankDiagnoses,
  type ServiceController,
  type ServiceGroup,
} from '../service/index.js';
import { readSettings } from '../service/plan.js';
import { catUnit } from '../service/systemd.js';
import { effectiveEnvironment, effectiveListValue, normalizeUnitName } from '../service/unit.js';

/** Flags every service command accepts. */
export const TARGET_FLAGS = {
  host: { type: 'string' },
  'ssh-config': { type: 'string' },
  unit: { type: 'string' },
  engine: { type: 'string' },
  endpoint: { type: 'string' },
  config: { type: 'string', short: 'c' },
  'action-log': { type: 'string' },
  sudo: { type: 'boolean' },
  rank: { type: 'string' },
} as const;

/** Usage lines of the target flags. */
export const TARGET_USAGE = `target (flags win over -c spectune.yaml, read when present in this folder):
  --host user@host          the service host over SSH (default: this machine)
  --ssh-config FILE         ssh_config for it (default: your ~/.ssh/config)   --sudo  run systemctl etc. through sudo
  --unit NAME               the systemd unit (required here or in spectune.yaml)
  --engine ${ENGINE_NAMES.join('|')}   (default ${ENGINE_NAMES[0]})
  --endpoint URL            (default http://<host>:<--port of ExecStart, else ${ENGINE_NAMES.map((n) => DEFAULT_PORTS[n]).join(' / ')}>)
  -c FILE                   spectune.yaml to read the target from (default ./spectune.yaml when it exists)
  --action-log FILE         your log of spectune's stops/restarts (default $SPECTUNE_ACTION_LOG, else
                            ${DEFAULT_ACTION_LOG}); checked before any host is touched
  --rank N                  one rank of a multi-host target (0 = rank0, the endpoint); default: every rank of
                            spectune.yaml's target.hosts, as one group (rank0 first). A command that changes
                            the host refuses to change part of a multi-node group (--nnodes N) unless --rank N
                            says so (with --host/--unit: the unit is rank N); it then warns that the ranks differ`;

/** The config file read when -c is not given and it exists in the working directory. */
const DEFAULT_CONFIG = 'spectune.yaml';

/** Flag values of the target flags. */
export type TargetFlagValues = Partial<Record<keyof typeof TARGET_FLAGS, string | boolean>>;

/** A resolved target. */
export interface ServiceTarget {
  target: string | undefined;
  sshConfig: string | undefined;
  sudo: boolean;
  unit: string;
  engine: EngineName;
  endpoint: string | undefined;
  /** Where an explicit endpoint came from (the fix of a port that does not match the unit's --port names it). */
  endpointSource?: EndpointSource;
  actionLogPath: string;
  /** Commit-confirmed lease of a candidate (ms; 0 = off), from spectune.yaml's target.lease (default 5 min). */
  leaseMs?: number;
  /** The campaign store of spectune.yaml (resolved against the config file's folder), for status. */
  store?: string;
  /** How long a restart waits for in-flight requests (ms), from spectune.yaml's target.drainTimeout. */
  drainTimeoutMs?: number;
  /** The operator's restart hooks, from spectune.yaml's target.hooks. */
  hooks?: RestartHooks;
  /** The engine's --api-key, sent on every probe: spectune.yaml's target.apiKey/apiKeyEnv, else $SPECTUNE_API_KEY. */
  apiKey?: string | null;
  /** The units the command acts on, rank0 first: every rank of the config's target, or the one --rank/--host/--unit picks. */
  ranks: RankTarget[];
  /** --rank N was given: changing that rank alone is on purpose (the group guard warns instead of refusing). */
  rankPicked?: boolean;
}

/** One rank's unit: its ssh destination (undefined: this machine) and unit name. */
export interface RankTarget {
  target: string | undefined;
  unit: string;
  /** Its rank in the config's target (0 = rank0, the endpoint). */
  rank: number;
}

// Target values from spectune.yaml (every rank, rank0 first as the tuner orders them: it serves the endpoint).
async function readConfigTarget(path: string | undefined, env: NodeJS.ProcessEnv): Promise<Partial<ServiceTarget>> {
  const file = path ?? (existsSync(DEFAULT_CONFIG) ? DEFAULT_CONFIG : undefined);
  if (!file) return {};
  const { loadConfig } = await import('../config/load.js');
  const { config } = await loadConfig(file);
  const t = config.target;
  const ranks = orderRanks(t.hosts).map((h, rank) => ({
    target: h.host ?? undefined,
    unit: normalizeUnitName(h.unit),
    rank,
  }));
  return {
    target: ranks[0].target,
    unit: ranks[0].unit,
    engine: t.engine,
    endpoint: t.endpoint,
    ranks,
    leaseMs: t.leaseMs,
    apiKey: resolveApiKeyInfo(t, env).key,
    drainTimeoutMs: t.drainTimeoutMs,
    hooks: t.hooks,
    store: resolvePath(dirname(file), config.store),
  };
}

// The ranks a command acts on: --host/--unit name one unit; --rank N picks one of the config's; else all of them.
function pickRanks(
  all: RankTarget[] | undefined,
  one: RankTarget,
  rawRank: string | undefined,
  explicit: boolean,
): RankTarget[] {
  if (rawRank === undefined) return explicit || !all?.length ? [one] : all;
  const n = /^\d+$/.test(rawRank) ? Number(rawRank) : NaN;
  // --host/--unit name the unit: --rank N says which rank of its group it is (the guard then lets it change alone).
  if (explicit || !all?.length) {
    if (!Number.isInteger(n))
      throw new ToolError('E_USAGE', `--rank: expected a rank number (0 = rank0), got "${rawRank}"`, {
        hint: 'e.g. --rank 1 for the first worker',
      });
    return [{ ...one, rank: n }];
  }
  if (!(n < all.length))
    throw new ToolError(
      'E_USAGE',
      `--rank: expected 0..${all.length - 1} (the target has ${all.length} rank${all.length === 1 ? '' : 's'}), got "${rawRank}"`,
      { hint: 'e.g. --rank 1 for the first worker; leave it out for the whole group' },
    );
  return [all[n]];
}

// Merge flags over the config file; the unit and engine are required one way or the other.
export async function resolveTarget(flags: TargetFlagValues, env: NodeJS.ProcessEnv): Promise<ServiceTarget> {
  const str = (k: keyof typeof TARGET_FLAGS) => (typeof flags[k] === 'string' ? (flags[k] as string) : undefined);
  const fromConfig = await readConfigTarget(str('config'), env);
  const unit = str('unit') ?? fromConfig.unit;
  if (!unit) throw new ToolError('E_USAGE', 'no unit: pass --unit NAME (or a spectune.yaml with target.hosts[].unit)');
  const engine = (str('engine') ?? fromConfig.engine ?? ENGINE_NAMES[0]) as EngineName;
  if (!ENGINE_NAMES.includes(engine))
    throw new ToolError('E_USAGE', `--engine: expected one of ${ENGINE_NAMES.join(', ')}, got "${engine}"`);
  const explicit = str('host') !== undefined || str('unit') !== undefined;
  const one = { target: str('host') ?? fromConfig.target, unit: normalizeUnitName(unit), rank: 0 };
  const ranks = pickRanks(fromConfig.ranks, one, str('rank'), explicit);
  // The yaml's endpoint is its rank0 unit's: another unit (--unit/--host naming a different one) derives its own.
  const sameAsConfig = !explicit || (fromConfig.unit === ranks[0].unit && fromConfig.target === ranks[0].target);
  return {
    target: ranks[0].target,
    sshConfig: str('ssh-config'),
    sudo: flags.sudo === true,
    unit: ranks[0].unit,
    engine,
    endpoint: str('endpoint') ?? (sameAsConfig ? fromConfig.endpoint : undefined),
    endpointSource: str('endpoint') !== undefined ? '--endpoint' : 'target.endpoint',
    actionLogPath: resolveActionLogPath(str('action-log'), env),
    ranks,
    rankPicked: str('rank') !== undefined,
    ...(sameAsConfig
      ? { drainTimeoutMs: fromConfig.drainTimeoutMs, hooks: fromConfig.hooks, store: fromConfig.store }
      : {}),
    apiKey: sameAsConfig && fromConfig.apiKey !== undefined ? fromConfig.apiKey : resolveApiKeyInfo(null, env).key,
  };
}

// The hostname an ssh destination resolves to (ssh_config aliases included), for the default endpoint.
export async function resolveHostname(t: Pick<ServiceTarget, 'target' | 'sshConfig'>): Promise<string> {
  if (!t.target) return '127.0.0.1';
  const argv = ['ssh', ...(t.sshConfig ? ['-F', t.sshConfig] : []), '-G', '--', t.target];
  const r = await runArgv('local', argv, { timeoutMs: 10_000 });
  const line = r.stdout.split('\n').find((l) => l.startsWith('hostname '));
  return line ? line.slice('hostname '.length).trim() : t.target.replace(/^.*@/, '');
}

// The endpoint: the flag/config value, else http://<host>:<--port of the ExecStart in force>.
async function resolveEndpoint(t: ServiceTarget, host: Host): Promise<string> {
  if (t.endpoint) return t.endpoint.replace(/\/+$/, '');
  const files = await catUnit(host, t.unit);
  const exec = effectiveListValue(files, 'Service', 'ExecStart');
  const port = exec ? readSettings(exec.value, effectiveEnvironment(files), t.engine).port : undefined;
  const hostname = await resolveHostname(t);
  return `http://${hostname.includes(':') ? `[${hostname}]` : hostname}:${typeof port === 'number' ? port : DEFAULT_PORTS[t.engine]}`;
}

/** The open hosts with their controllers (one per rank, rank0 first) as one group; close() releases the SSH connections. */
export interface OpenService {
  target: ServiceTarget;
  /** The first rank's host and controller (the only ones of a one-unit target). */
  host: Host;
  endpoint: string;
  controller: ServiceController;
  group: ServiceGroup;
  close(): Promise<void>;
}

// Open every rank's host and build the controllers and their group; a dry run records nothing (no action log written).
// `command`: a host-changing command (apply, rollback, fold): refused on part of a multi-node group unless --rank.
export async function openService(
  t: ServiceTarget,
  onEvent: EventSink,
  opts: {
    dryRun?: boolean;
    readyTimeoutMs?: number;
    leaseMs?: number;
    drainTimeoutMs?: number;
    checkEndpointPort?: boolean;
    command?: string;
  } = {},
): Promise<OpenService> {
  const hosts: Host[] = [];
  const close = () => Promise.all(hosts.map((h) => h.close().catch(() => {}))).then(() => undefined);
  try {
    for (const r of t.ranks) hosts.push(await openHost({ target: r.target, sshConfig: t.sshConfig, sudo: t.sudo }));
    if (opts.command) {
      await guardGroupChange(
        t.ranks.map((r, i) => ({ host: hosts[i], unit: r.unit, rank: r.rank })),
        t.engine,
        opts.command,
        { rankPicked: t.rankPicked === true, rankFlag: true, onEvent },
      );
    }
    const endpoint = await resolveEndpoint({ ...t, target: t.ranks[0].target, unit: t.ranks[0].unit }, hosts[0]);
    // The old shared log (/var/lib/spectune) is still read for attribution when it exists and is readable.
    const actionLog = opts.dryRun
      ? createMemoryActionLog()
      : createFileActionLog(t.actionLogPath, { alsoRead: [LEGACY_ACTION_LOG] });
    // With several ranks the group emits the one verdict over all journals; the per-rank ones would contradict it.
    const rankEvents = t.ranks.length > 1 ? withoutRankDiagnoses(onEvent) : onEvent;
    const leaseMs = opts.leaseMs ?? t.leaseMs ?? DEFAULT_LEASE_MS;
    const lease = leaseMs > 0 ? { ms: leaseMs } : undefined;
    const ctls = t.ranks.map((r, i) =>
      createServiceController({
        host: hosts[i],
        unit: r.unit,
        engine: t.engine,
        endpoint,
        actionLog,
        onEvent: t.ranks.length > 1 || r.rank > 0 ? tagRankEvents(rankEvents, r.rank, hosts[i].name) : rankEvents,
        readyTimeoutMs: opts.readyTimeoutMs,
        lease,
        apiKey: t.apiKey,
        maxDrainWaitMs: opts.drainTimeoutMs ?? t.drainTimeoutMs,
        hooks: t.hooks,
      }),
    );
    const group = createServiceGroup({ ranks: ctls, onEvent, actionLog });
    // A command that waits for the engine fails at once on an explicit endpoint whose port the unit does not listen on.
    if (opts.checkEndpointPort && t.endpoint) await ctls[0].checkEndpointPort(t.endpointSource ?? 'target.endpoint');
    return { target: t, host: hosts[0], endpoint, controller: ctls[0], group, close };
  } catch (e) {
    await close();
    throw e;
  }
}
