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
    return { id: 'engine', subject, status: 'FAIL', summary: `the unit runs ${f.detectedEngine}, not ${f.engine}`, fix: `set target.engine: ${f.detectedEngine} (or --engine ${f.detectedEngine})`, facts };
  }
  if (f.healthStatus === 200) return { id: 'engine', subject, status: 'PASS', summary: `${version} healthy (GET ${f.healthUrl} → 200)`, fix: null, facts };
  const seen = f.healthStatus === null ? (f.healthError ?? 'no answer') : `HTTP ${f.healthStatus}`;
  return {
    id: 'engine', subject, status: 'FAIL', summary: `GET ${f.healthUrl} → ${seen}: the engine is not serving`,
    fix: f.healthStatus === null ? 'check the endpoint (target.endpoint / --endpoint), that the unit is running, and that this machine can reach the port' : 'wait for the start-up to finish, or see `spectune diagnose --host ... --unit ...`',
    facts,
  };
}
