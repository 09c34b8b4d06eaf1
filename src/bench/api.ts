// Pure request builders for the three streaming APIs: the path, the JSON body and the headers of one request.

/** Which HTTP API the benchmark speaks. */
export type BenchApi = 'chat' | 'completions' | 'sglang';

/** One prompt: plain text, or chat messages when the user's file carries them. */
export interface BenchPrompt {
  text: string;
  messages?: { role: string; content: string }[];
}

/** Everything needed to write one request. */
export interface PlannedRequest {
  path: string;
  body: string;
  headers: Record<string, string>;
}

const PATHS: Record<BenchApi, string> = {
  chat: '/v1/chat/completions',
  completions: '/v1/completions',
  sglang: '/generate',
};

// Build one streamed request with a fixed output length (ignore_eos, min_tokens = max_tokens) and the id
// `bench-<n>` in the header and in the body (`rid` for SGLang, `user` for OpenAI APIs) so server logs can be matched.
// `extraFields` (the cache policy's, e.g. llama.cpp `cache_prompt: false`) are added to the body's top level.
export function planRequest(
  api: BenchApi,
  model: string | null,
  prompt: BenchPrompt,
  id: string,
  outputTokens: number,
  apiKey: string | null,
  extraFields?: Record<string, unknown>,
): PlannedRequest {
  const base =
    api === 'sglang' ? sglangBody(prompt, id, outputTokens) : openAiBody(api, model, prompt, id, outputTokens);
  const body = extraFields ? { ...base, ...extraFields } : base;
  const json = JSON.stringify(body);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'text/event-stream',
    'content-length': String(Buffer.byteLength(json)),
    'x-request-id': id,
  };
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  return { path: PATHS[api], body: json, headers };
}

function openAiBody(
  api: BenchApi,
  model: string | null,
  prompt: BenchPrompt,
  id: string,
  outputTokens: number,
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: model ?? 'default',
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: outputTokens,
    min_tokens: outputTokens,
    ignore_eos: true,
    temperature: 0,
    user: id,
    rid: id,
  };
  if (api === 'chat') body.messages = prompt.messages ?? [{ role: 'user', content: prompt.text }];
  else body.prompt = prompt.text;
  return body;
}

function sglangBody(prompt: BenchPrompt, id: string, outputTokens: number): Record<string, unknown> {
  return {
    text: prompt.text,
    rid: id,
    stream: true,
    sampling_params: { max_new_tokens: outputTokens, min_new_tokens: outputTokens, ignore_eos: true, temperature: 0 },
  };
}

// Join a base URL and a path without doubling slashes; a base that already ends in /v1 is not repeated.
export function joinUrl(base: string, path: string): URL {
  const u = new URL(base);
  const prefix = u.pathname.replace(/\/+$/, '');
  const p = prefix.endsWith('/v1') && path.startsWith('/v1/') ? path.slice(3) : path;
  u.pathname = prefix + p;
  return u;
}
