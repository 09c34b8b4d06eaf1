// The engine's own view around a level: GET /metrics (Prometheus) and /server_info (SGLang; older /get_server_info).
import { joinUrl } from './api.js';
import { parsePrometheus, summarizeEngineView, type EngineView } from './prometheus.js';
import type { Transport } from './transport.js';

// A scrape must not hold up the benchmark: an engine that cannot answer in 5 s is reported as "no data".
const SCRAPE_TIMEOUT_MS = 5000;
const INFO_PATHS = ['/server_info', '/get_server_info'];

/** Remembers which endpoints answered, so later scrapes skip the ones that 404. */
export interface Scraper {
  scrape(): Promise<EngineView | null>;
}

// Build a scraper for the server behind a base URL (a trailing /v1 is stripped: metrics live at the root).
export function createScraper(t: Transport, baseUrl: string, apiKey: string | null): Scraper {
  const root = baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
  const headers: Record<string, string> = apiKey ? { authorization: `Bearer ${apiKey}` } : {};
  let metricsOk = true;
  let infoPaths = INFO_PATHS;
  return {
    async scrape() {
      const metricsText = metricsOk ? await t.getText(joinUrl(root, '/metrics'), headers, SCRAPE_TIMEOUT_MS) : null;
      if (metricsText === null) metricsOk = false;
      let info: unknown = null;
      for (const p of infoPaths) {
        const text = await t.getText(joinUrl(root, p), headers, SCRAPE_TIMEOUT_MS);
        if (text === null) continue;
        infoPaths = [p];
        info = safeJson(text);
        break;
      }
      if (info === null && infoPaths.length > 1) infoPaths = [];
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
