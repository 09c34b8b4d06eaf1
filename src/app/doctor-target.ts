// Which service `spectune doctor` checks and against which numbers: spectune.yaml (every rank), or the flags
// (one unit). Nothing is read from a host here.
import { existsSync } from 'node:fs';
import { resolveApiKeyInfo, type ApiKeyInfo } from '../config/api-key.js';
import { orderRanks } from '../config/ranks.js';
import { ToolError } from '../errors.js';
import { normalizeUnitName } from '../unit-name.js';
import { ENGINE_NAMES } from '../engines/index.js';
import type { EngineName } from '../engines/types.js';

/** The config file read when neither -c nor --unit is given and it exists in the working directory. */
const DEFAULT_CONFIG = 'spectune.yaml';
/** Without a config: the benchmark defaults of spectune.yaml. */
const DEFAULT_OUTPUT_TOKENS = 256;
const DEFAULT_READY_MS = 20 * 60_000;
const DEFAULT_STORE = './spectune.db';

/** What doctor was asked. */
export interface DoctorRequest {
  config?: string;
  host?: string;
  sshConfig?: string;
  sudo?: boolean;
  unit?: string;
  engine?: string;
  endpoint?: string;
  /** Measured inter-token latency (ms) for the stop-timeout check; undefined = conservative estimate. */
  itlMs?: number;
}

/** One host and unit to check; rank0 serves the endpoint. */
export interface DoctorHost {
  target: string | undefined;
  unit: string;
  role: 'rank0' | 'rank1';
}

/** The resolved target and the numbers the checks compare against. */
export interface DoctorPlan {
  source: string;
  hosts: DoctorHost[];
  /** null: read it from the unit's ExecStart. */
  engine: EngineName | null;
  endpoint: string | null;
  /** The key spectune sends (target.apiKey / target.apiKeyEnv; flags only: $SPECTUNE_API_KEY) and its fix. */
  apiKey: ApiKeyInfo;
  outputTokens: number;
  readyTimeoutMs: number;
  store: string;
  sshConfig: string | undefined;
  sudo: boolean;
  itlMs: number | null;
}

// Resolve the plan: --unit (with --host) checks one unit; otherwise -c FILE or ./spectune.yaml.
export async function resolveDoctorPlan(req: DoctorRequest, env: NodeJS.ProcessEnv): Promise<DoctorPlan> {
  const common = { sshConfig: req.sshConfig, sudo: req.sudo === true, itlMs: req.itlMs ?? null };
  if (req.engine !== undefined && !ENGINE_NAMES.includes(req.engine as EngineName)) {
    throw new ToolError('E_USAGE', `--engine: expected one of ${ENGINE_NAMES.join(', ')}, got "${req.engine}"`);
  }
  if (req.unit) {
    return {
      ...common,
      source: 'flags',
      hosts: [{ target: req.host, unit: normalizeUnitName(req.unit), role: 'rank0' }],
      engine: (req.engine as EngineName | undefined) ?? null,
      endpoint: req.endpoint ?? null,
      apiKey: resolveApiKeyInfo(null, env),
      outputTokens: DEFAULT_OUTPUT_TOKENS,
      readyTimeoutMs: DEFAULT_READY_MS,
      store: DEFAULT_STORE,
    };
  }
  const file = req.config ?? (existsSync(DEFAULT_CONFIG) ? DEFAULT_CONFIG : undefined);
  if (!file) {
    throw new ToolError('E_USAGE', 'doctor: no target: no spectune.yaml here and no --unit', {
      hint: 'run `spectune init --host HOST` first, or pass -c FILE, or --host HOST --unit UNIT',
    });
  }
  const { loadConfig } = await import('../config/load.js');
  const { config } = await loadConfig(file);
  const t = config.target;
  if (t.manager === 'process')
    throw new ToolError(
      'E_USAGE',
      `${file}: target.manager is process (the demo's process manager): doctor checks systemd targets`,
    );
  return {
    ...common,
    source: file,
    hosts: orderRanks(t.hosts).map((h, i) => ({
      target: h.host ?? undefined,
      unit: h.unit,
      role: i === 0 ? 'rank0' : 'rank1',
    })),
    engine: t.engine,
    endpoint: req.endpoint ?? t.endpoint,
    apiKey: resolveApiKeyInfo(t, env),
    outputTokens: config.benchmark.outputTokens,
    readyTimeoutMs: config.benchmark.timeouts.readyMs,
    store: config.store,
  };
}
