// Fair measurements: every level starts from the same prefix-cache state. The engine adapter says how (data): a
// request field that turns the cache off (llama.cpp `cache_prompt: false`), an endpoint that empties it (SGLang
// `POST /flush_cache`, vLLM `POST /reset_prefix_cache`), and/or a random prefix per request that no cache can match.
import http from 'node:http';
import https from 'node:https';
import { randomBytes } from 'node:crypto';
import type { BenchPrompt } from './api.js';
import { joinUrl } from './api.js';

/** How a benchmark keeps an engine's prefix cache from favouring a run (stated in bench --json and the report). */
export interface CachePolicy {
  /** Fields added to every request body, e.g. llama.cpp's { cache_prompt: false }. */
  requestFields?: Record<string, string | number | boolean>;
  /** Endpoint that empties the prefix cache; called before each measured level (after its warm-up). */
  resetEndpoint?: { method: 'POST'; path: string };
  /** Prefix every prompt with a random tag unique to the run and the request. */
  uniquePrefix: boolean;
  /** One line for humans, e.g. "llama.cpp cache_prompt=false on every request". */
  description: string;
}

/** The policy when the engine is unknown: a unique random prefix per request defeats every prefix cache. */
export const UNIQUE_PREFIX_POLICY: CachePolicy = {
  uniquePrefix: true,
  description: 'a random prefix unique to the run and the request on every prompt',
};

/** No cache handling at all (the operator asked for it). */
export const KEEP_CACHE_POLICY: CachePolicy = {
  uniquePrefix: false,
  description: 'none: the engine prefix cache may serve repeated prompts',
};

// A tag unique to one benchmark run: two runs of the same config never share a prompt prefix.
export function createRunNonce(): string {
  return randomBytes(6).toString('hex');
}

// The prompt as sent: a unique tag in front of the text (and of the first chat message) when the policy asks.
export function applyPromptPolicy(policy: CachePolicy, nonce: string, id: string, prompt: BenchPrompt): BenchPrompt {
  if (!policy.uniquePrefix) return prompt;
  const tag = `[${nonce}-${id}] `;
  const messages = prompt.messages?.map((m, i) => (i === 0 ? { ...m, content: tag + m.content } : m));
  return messages ? { text: tag + prompt.text, messages } : { text: tag + prompt.text };
}

/** What a cache reset call did. */
export interface ResetOutcome {
  ok: boolean;
  status: number | null;
  error: string | null;
}

// Call the engine's cache reset endpoint (an empty POST); a failure is reported, never thrown.
export function resetEngineCache(
  baseUrl: string,
  policy: CachePolicy,
  apiKey: string | null,
  timeoutMs = 10_000,
): Promise<ResetOutcome | null> {
  const ep = policy.resetEndpoint;
  if (!ep) return Promise.resolve(null);
  const root = baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
  const url = joinUrl(root, ep.path);
  const request = url.protocol === 'https:' ? https.request : http.request;
  const headers: Record<string, string> = { 'content-length': '0' };
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  return new Promise((resolve) => {
    const req = request(url, { method: ep.method, headers, timeout: timeoutMs }, (res) => {
      res.resume();
      const status = res.statusCode ?? 0;
      res.on('end', () =>
        resolve({ ok: status >= 200 && status < 300, status, error: status >= 300 ? `HTTP ${status}` : null }),
      );
    });
    req.on('timeout', () => req.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    req.on('error', (e) => resolve({ ok: false, status: null, error: e.message }));
    req.end();
  });
}
