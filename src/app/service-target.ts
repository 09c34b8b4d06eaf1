// Which service the status/apply/rollback/logs commands act on: flags first, then spectune.yaml `target`;
// opens the host and builds the service controller.
import { existsSync } from 'node:fs';
import { orderRanks } from '../config/ranks.js';
import { ToolError } from '../errors.js';
import { DEFAULT_PORTS, ENGINE_NAMES } from '../engines/registry.js';
import type { EngineName } from '../engines/types.js';
import type { EventSink } from '../tune/events.js';
import { openHost } from '../host/open.js';
import type { Host } from '../host/types.js';
import { runArgv } from '../host/local.js';
import { createFileActionLog, createMemoryActionLog, DEFAULT_ACTION_LOG, resolveActionLogPath } from '../service/action-log.js';
import { createServiceController, type ServiceController } from '../service/index.js';
import { readSettings } from '../service/plan.js';
import { catUnit } from '../service/systemd.js';
import { effectiveEnvironment, effectiveListValue, normalizeUnitName } from '../service/unit.js';

/** Flags every service command accepts. */
export const TARGET_FLAGS = {
  host: { type: 'string' }, 'ssh-config': { type: 'string' }, unit: { type: 'string' }, engine: { type: 'string' },
  endpoint: { type: 'string' }, config: { type: 'string', short: 'c' }, 'action-log': { type: 'string' }, sudo: { type: 'boolean' },
} as const;

/** Usage lines of the target flags. */
export const TARGET_USAGE = `target (flags win over -c spectune.yaml, read when present in this folder):
  --host user@host          the service host over SSH (default: this machine)
  --ssh-config FILE         ssh_config for it (default: your ~/.ssh/config)   --sudo  run systemctl etc. through sudo
  --unit NAME               the systemd unit (required here or in spectune.yaml)
  --engine ${ENGINE_NAMES.join('|')}   (default sglang)
  --endpoint URL            (default http://<host>:<--port of ExecStart, else ${ENGINE_NAMES.map((n) => DEFAULT_PORTS[n]).join(' / ')}>)
  -c FILE                   spectune.yaml to read the target from (default ./spectune.yaml when it exists)
  --action-log FILE         (default $SPECTUNE_ACTION_LOG, else ${DEFAULT_ACTION_LOG})`;

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
  actionLogPath: string;
  /** Hosts of the config's target that this command does not act on (rank1 of a two-host model), as "role host unit". */
  otherHosts?: string[];
}

// Target values from spectune.yaml (rank0, as the tuner orders ranks: it serves the endpoint), when a config is in play.
async function readConfigTarget(path: string | undefined): Promise<Partial<ServiceTarget>> {
  const file = path ?? (existsSync(DEFAULT_CONFIG) ? DEFAULT_CONFIG : undefined);
  if (!file) return {};
  const { loadConfig } = await import('../config/load.js');
  const { config } = await loadConfig(file);
  const t = config.target;
  const [rank0, ...rest] = orderRanks(t.hosts);
  const others = rest.map((h, i) => `${h.role ?? `host ${i + 2}`} ${h.host ?? 'this machine'} ${h.unit}`);
  return { target: rank0.host ?? undefined, unit: rank0.unit, engine: t.engine, endpoint: t.endpoint, otherHosts: others };
}

// Merge flags over the config file; the unit and engine are required one way or the other.
export async function resolveTarget(flags: TargetFlagValues, env: NodeJS.ProcessEnv): Promise<ServiceTarget> {
  const str = (k: keyof typeof TARGET_FLAGS) => (typeof flags[k] === 'string' ? (flags[k] as string) : undefined);
  const fromConfig = await readConfigTarget(str('config'));
  const unit = str('unit') ?? fromConfig.unit;
  if (!unit) throw new ToolError('E_USAGE', 'no unit: pass --unit NAME (or a spectune.yaml with target.hosts[].unit)');
  const engine = (str('engine') ?? fromConfig.engine ?? 'sglang') as EngineName;
  if (!ENGINE_NAMES.includes(engine)) throw new ToolError('E_USAGE', `--engine: expected one of ${ENGINE_NAMES.join(', ')}, got "${engine}"`);
  return {
    target: str('host') ?? fromConfig.target, sshConfig: str('ssh-config'), sudo: flags.sudo === true,
    unit: normalizeUnitName(unit), engine, endpoint: str('endpoint') ?? fromConfig.endpoint,
    actionLogPath: resolveActionLogPath(str('action-log'), env),
    // --host/--unit pick one unit explicitly; otherwise the config's other ranks are left out, and said so.
    otherHosts: str('host') === undefined && str('unit') === undefined ? fromConfig.otherHosts ?? [] : [],
  };
}

// The warning a single-unit command prints for a multi-host target; null when the target has one host.
export function describeOtherHosts(t: ServiceTarget, acting: string): string | null {
  if (!t.otherHosts || t.otherHosts.length === 0) return null;
  return `multi-host target: ${acting} ${t.target ?? 'this machine'} ${t.unit} (rank0) only, not ${t.otherHosts.join(', ')}; \`spectune tune\` deploys to every rank, or pass --host/--unit for another one`;
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

/** An open host with its controller; close() releases the SSH connection. */
export interface OpenService {
  target: ServiceTarget;
  host: Host;
  endpoint: string;
  controller: ServiceController;
  close(): Promise<void>;
}

// Open the host and build the controller for a target; a dry run records nothing (no action log written).
export async function openService(t: ServiceTarget, onEvent: EventSink, opts: { dryRun?: boolean } = {}): Promise<OpenService> {
  const host = await openHost({ target: t.target, sshConfig: t.sshConfig, sudo: t.sudo });
  try {
    const endpoint = await resolveEndpoint(t, host);
    const controller = createServiceController({
      host, unit: t.unit, engine: t.engine, endpoint, actionLog: opts.dryRun ? createMemoryActionLog() : createFileActionLog(t.actionLogPath), onEvent,
    });
    return { target: t, host, endpoint, controller, close: () => host.close() };
  } catch (e) {
    await host.close();
    throw e;
  }
}
