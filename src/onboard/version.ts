// How to read an engine's version out of the answer of one of its adapter's versionProbes (pure).
import type { EngineName, VersionProbe } from '../engines/types.js';
import type { CheckResult } from './types.js';

export type { VersionProbe } from '../engines/types.js';

// The version string in a probe's JSON body, or null.
export function readVersion(probe: VersionProbe, body: string): string | null {
  try {
    const v = (JSON.parse(body) as Record<string, unknown>)[probe.field];
    return typeof v === 'string' || typeof v === 'number' ? String(v) : null;
  } catch {
    return null;
  }
}

/** What the engine probes saw. */
export interface EngineFacts {
  engine: EngineName;
  healthUrl: string;
  healthStatus: number | null;
  healthError: string | null;
  version: string | null;
  /** The engine the unit's ExecStart runs (null: could not be read), against the one configured. */
  detectedEngine: EngineName | null;
}

// Health and version of the engine, and whether the unit runs the engine the config names.
export function judgeEngine(subject: string, f: EngineFacts): CheckResult {
  const facts = { healthUrl: f.healthUrl, healthStatus: f.healthStatus, version: f.version };
  const version = f.version ? `${f.engine} ${f.version}` : `${f.engine} (version not reported)`;
  if (f.detectedEngine && f.detectedEngine !== f.engine) {
    return {
      id: 'engine',
      subject,
      status: 'FAIL',
      summary: `the unit runs ${f.detectedEngine}, not ${f.engine}`,
      fix: `set target.engine: ${f.detectedEngine} (or --engine ${f.detectedEngine})`,
      facts,
    };
  }
  if (f.healthStatus === 200)
    return {
      id: 'engine',
      subject,
      status: 'PASS',
      summary: `${version} healthy (GET ${f.healthUrl} → 200)`,
      fix: null,
      facts,
    };
  const seen = f.healthStatus === null ? (f.healthError ?? 'no answer') : `HTTP ${f.healthStatus}`;
  return {
    id: 'engine',
    subject,
    status: 'FAIL',
    summary: `GET ${f.healthUrl} → ${seen}: the engine is not serving`,
    fix:
      f.healthStatus === null
        ? 'check the endpoint (target.endpoint / --endpoint), that the unit is running, and that this machine can reach the port'
        : 'wait for the start-up to finish, or see `spectune diagnose --host ... --unit ...`',
    facts,
  };
}

/** What an authenticated probe saw: the key spectune sends (where from, and its fix) against the engine's answer. */
export interface ApiKeyFacts {
  /** GET <endpoint><the adapter's authProbePath>. */
  url: string;
  /** Its status (null: no answer). */
  status: number | null;
  /** Whether spectune sent a key. */
  sent: boolean;
  /** Where the key comes from ("$SPECTUNE_API_KEY (target.apiKeyEnv)", "no key ($X is not set)"). */
  source: string;
  /** Which variable or config key carries the key. */
  fix: string;
}

// Whether the engine accepts the key spectune will use: a 401/403 on a path the engine's --api-key protects is a FAIL.
export function judgeApiKey(subject: string, f: ApiKeyFacts): CheckResult {
  const facts = { url: f.url, status: f.status, sent: f.sent };
  if (f.status === 401 || f.status === 403) {
    const summary = f.sent
      ? `the engine refuses the key spectune sends, from ${f.source} (GET ${f.url} → ${f.status})`
      : `the engine wants an API key and spectune has ${f.source} (GET ${f.url} → ${f.status}): every benchmark request would fail`;
    return { id: 'api-key', subject, status: 'FAIL', summary, fix: f.fix, facts };
  }
  if (f.status !== null && f.status >= 200 && f.status < 300) {
    return {
      id: 'api-key',
      subject,
      status: 'PASS',
      summary: f.sent
        ? `the engine accepts the key from ${f.source} (GET ${f.url} → ${f.status})`
        : `the engine asks for no API key (GET ${f.url} → ${f.status})`,
      fix: null,
      facts,
    };
  }
  return {
    id: 'api-key',
    subject,
    status: 'WARN',
    summary: `cannot tell whether the engine accepts spectune's key: GET ${f.url} → ${f.status ?? 'no answer'}`,
    fix: 'check the endpoint (target.endpoint / --endpoint)',
    facts,
  };
}
