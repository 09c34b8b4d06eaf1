// The engine's own view around a level: GET its metrics (Prometheus) and info JSON (SGLang /server_info, older
// /get_server_info), at the paths its adapter names.
import { joinUrl } from './api.js';
import { parsePrometheus } from '../engines/prometheus.js';
import type { EngineEndpoints } from '../engines/registry.js';
import { summarizeEngineView, type EngineView } from './prometheus.js';
import type { Transport } from './transport.js';

// A scrape must not hold up the benchmark: an engine that cannot answer in 5 s is reported as "no data".
const SCRAPE_TIMEOUT_MS = 5000;

/** Remembers which endpoints answered, so later scrapes skip the ones that 404. */
export interface Scraper {
  scrape(): Promise<EngineView | null>;
}

// Build a scraper for the server behind a base URL (a trailing /v1 is stripped: metrics live at the root). Every
// endpoint is asked at once, each within timeoutMs (default SCRAPE_TIMEOUT_MS): a hung server costs one timeout,
// not one per endpoint; an endpoint that does not answer is not asked again.
export function createScraper(
  t: Transport,
  baseUrl: string,
  apiKey: string | null,
  endpoints: EngineEndpoints,
  timeoutMs = SCRAPE_TIMEOUT_MS,
): Scraper {
  const root = baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
  const headers: Record<string, string> = apiKey ? { authorization: `Bearer ${apiKey}` } : {};
  const wait = Math.min(SCRAPE_TIMEOUT_MS, timeoutMs);
  let metricsOk = true;
  let infoPaths = endpoints.infoPaths;
  return {
    async scrape() {
      const [metricsText, ...infos] = await Promise.all([
        metricsOk ? t.getText(joinUrl(root, endpoints.metricsPath), headers, wait) : Promise.resolve(null),
        ...infoPaths.map((p) => t.getText(joinUrl(root, p), headers, wait)),
      ]);
      if (metricsText === null) metricsOk = false;
      const at = infos.findIndex((x) => x !== null);
      const info: unknown = at < 0 ? null : safeJson(infos[at]!);
      if (at >= 0) infoPaths = [infoPaths[at]];
      else if (infoPaths.length > 1) infoPaths = [];
      if (metricsText === null && info === null) return null;
      return summarizeEngineView(metricsText === null ? null : parsePrometheus(metricsText), info);
    },
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}
