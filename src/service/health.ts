// HTTP probes from the controlling machine to the engine's endpoint: health, and what is in flight (metrics).
import type { EngineAdapter, EngineMetrics } from '../engines/types.js';
import { splitUrlCredentials } from '../url-credentials.js';

/** A health probe that takes longer than this counts as "not ready yet" (SGLang's /health generates one token). */
const HEALTH_TIMEOUT_MS = 3000;
/** Metrics endpoints answer fast or not at all. */
const METRICS_TIMEOUT_MS = 3000;

/** The answer of one health probe. */
export interface HealthResult {
  ok: boolean;
  status: number | null;
  error: string | null;
  url: string;
}

/** Probes the engine over HTTP; injectable so that tests need no server. */
export interface Prober {
  health(url: string): Promise<HealthResult>;
  metrics(endpoint: string, engine: EngineAdapter): Promise<EngineMetrics | null>;
}

// Join an endpoint base URL and a path.
export function joinUrl(endpoint: string, path: string): string {
  return `${endpoint.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

// The bearer header of the engine's --api-key (none without a key). Every probe sends it: the engines leave some
// paths open (SGLang /health*, /metrics*; vLLM all but /v1/*; llama-server /health, /models) and a key there is ignored.
function authHeaders(apiKey: string | null | undefined): Record<string, string> {
  return apiKey ? { authorization: `Bearer ${apiKey}` } : {};
}

// GET a URL with a timeout; null body on any network error.
async function getText(
  url: string,
  timeoutMs: number,
  apiKey?: string | null,
): Promise<{ status: number; body: string } | { error: string }> {
  try {
    const target = splitUrlCredentials(url, authHeaders(apiKey));
    const res = await fetch(target.url, { signal: AbortSignal.timeout(timeoutMs), headers: target.headers });
    return { status: res.status, body: await res.text() };
  } catch (e) {
    const err = e as Error & { cause?: { code?: string } };
    return { error: err.cause?.code ?? err.name ?? 'error' };
  }
}

// Probe the health endpoint once.
async function probeHealth(url: string, apiKey?: string | null): Promise<HealthResult> {
  const r = await getText(url, HEALTH_TIMEOUT_MS, apiKey);
  if ('error' in r) return { ok: false, status: null, error: r.error, url };
  return { ok: r.status === 200, status: r.status, error: null, url };
}

// The engine's info JSON (its adapter's infoPaths, tried in order), or null; an engine without one is not asked.
export async function readEngineInfo(
  endpoint: string,
  engine: EngineAdapter,
  apiKey?: string | null,
): Promise<unknown | null> {
  for (const path of engine.infoPaths) {
    const info = parseJson(await getText(joinUrl(endpoint, path), METRICS_TIMEOUT_MS, apiKey));
    if (info !== null) return info;
  }
  return null;
}

// Read Prometheus metrics and server info (whichever the engine exposes) and normalise them.
async function probeMetrics(
  endpoint: string,
  engine: EngineAdapter,
  apiKey?: string | null,
): Promise<EngineMetrics | null> {
  const [prom, infoJson] = await Promise.all([
    getText(joinUrl(endpoint, engine.metricsPath), METRICS_TIMEOUT_MS, apiKey),
    readEngineInfo(endpoint, engine, apiKey),
  ]);
  const promText = 'status' in prom && prom.status === 200 ? prom.body : null;
  if (promText === null && infoJson === null) return null;
  return engine.parseMetrics(promText, infoJson);
}

// A JSON body of a 200 answer, or null.
function parseJson(r: { status: number; body: string } | { error: string }): unknown | null {
  if (!('status' in r) || r.status !== 200) return null;
  try {
    return JSON.parse(r.body) as unknown;
  } catch {
    return null;
  }
}

/** The real prober (global fetch), without a key. */
export const httpProber: Prober = {
  health: (url) => probeHealth(url),
  metrics: (endpoint, engine) => probeMetrics(endpoint, engine),
};

/** The real prober sending the engine's --api-key on every probe (no 401 lines in the engine's journal). */
export function createHttpProber(apiKey: string | null | undefined): Prober {
  if (!apiKey) return httpProber;
  return {
    health: (url) => probeHealth(url, apiKey),
    metrics: (endpoint, engine) => probeMetrics(endpoint, engine, apiKey),
  };
}
