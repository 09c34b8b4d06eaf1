// Request parsing and response shapes of SGLang's OpenAI-compatible and native /generate APIs (pure).

/** Which API a generation request came in through. */
export type ApiKind = 'chat' | 'completion' | 'generate';

/** A generation request, normalised across the three APIs. */
export interface GenSpec {
  kind: ApiKind;
  rid: string | null;
  promptTokens: number;
  maxTokens: number;
  minTokens: number;
  ignoreEos: boolean;
  stream: boolean;
  includeUsage: boolean;
}

/** SGLang's default max_new_tokens when a request gives none. */
const DEFAULT_MAX_TOKENS = 128;
/** Rough characters per token for prompt token counts (no tokenizer in a simulator). */
const CHARS_PER_TOKEN = 4;
/** Natural answer lengths (tokens) when EOS is honoured: deterministic per request id. */
const NATURAL_LENGTH = { min: 24, span: 360 } as const;
/** The simulated model's vocabulary: every token is one of these words with a leading space. */
const WORDS = ['the', 'model', 'decodes', 'tokens', 'quickly', 'and', 'drafts', 'are', 'verified', 'in', 'one', 'step'];

type Body = Record<string, unknown>;

// Approximate token count of a prompt (string, list of strings/ids, or chat messages).
function countPromptTokens(kind: ApiKind, body: Body): number {
  let chars = 0;
  if (kind === 'chat') {
    for (const m of (body.messages as { content?: unknown }[] | undefined) ?? [])
      chars += JSON.stringify(m?.content ?? '').length + 8;
  } else {
    const p = kind === 'generate' ? (body.text ?? body.input_ids) : body.prompt;
    if (Array.isArray(p) && p.every((x) => typeof x === 'number')) return Math.max(1, p.length);
    chars = typeof p === 'string' ? p.length : JSON.stringify(p ?? '').length;
  }
  return Math.max(1, Math.ceil(chars / CHARS_PER_TOKEN));
}

// Read an optional non-negative integer field, or return an error text naming it.
function readInt(obj: Body, key: string): number | undefined | { error: string } {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) return { error: `${key} must be a non-negative integer` };
  return v;
}

// Normalise one request body; returns an OpenAI-style error message for a 400 when it is unusable.
export function parseGenSpec(kind: ApiKind, body: unknown): { ok: true; spec: GenSpec } | { ok: false; error: string } {
  if (typeof body !== 'object' || body === null) return { ok: false, error: 'request body must be a JSON object' };
  const b = body as Body;
  if (kind === 'chat' && !Array.isArray(b.messages)) return { ok: false, error: 'messages is required' };
  const sp = (kind === 'generate' ? (b.sampling_params as Body | undefined) : b) ?? {};
  const max =
    readInt(sp, kind === 'generate' ? 'max_new_tokens' : 'max_tokens') ??
    (kind === 'chat' ? readInt(sp, 'max_completion_tokens') : undefined);
  const min = readInt(sp, kind === 'generate' ? 'min_new_tokens' : 'min_tokens');
  for (const v of [max, min]) if (typeof v === 'object') return { ok: false, error: v.error };
  const rid = typeof b.rid === 'string' ? b.rid : typeof b.user === 'string' ? b.user : null;
  const so = b.stream_options as Body | undefined;
  return {
    ok: true,
    spec: {
      kind,
      rid,
      promptTokens: countPromptTokens(kind, b),
      maxTokens: Math.max(1, (max as number | undefined) ?? DEFAULT_MAX_TOKENS),
      minTokens: (min as number | undefined) ?? 0,
      ignoreEos: sp.ignore_eos === true,
      stream: b.stream === true,
      includeUsage: so?.include_usage === true,
    },
  };
}

// FNV-1a hash of a string, for deterministic per-request choices.
function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

// How many tokens a request generates and why it stops: max_tokens, or a natural EOS no earlier than min_tokens.
export function planLength(spec: GenSpec, rid: string): { tokens: number; reason: 'length' | 'stop' } {
  if (spec.ignoreEos) return { tokens: spec.maxTokens, reason: 'length' };
  const natural = Math.max(spec.minTokens, NATURAL_LENGTH.min + (hashString(rid) % NATURAL_LENGTH.span));
  return natural < spec.maxTokens ? { tokens: natural, reason: 'stop' } : { tokens: spec.maxTokens, reason: 'length' };
}

// Text of tokens [from, from+count) of the simulated output.
export function renderTokens(from: number, count: number): string {
  let s = '';
  for (let i = from; i < from + count; i++) s += ` ${WORDS[i % WORDS.length]}`;
  return s;
}

/** Context for rendering one response. */
export interface ResponseCtx {
  id: string;
  model: string;
  created: number;
}

// One SSE `data:` event.
export function renderSse(obj: unknown): string {
  return `data: ${JSON.stringify(obj)}\n\n`;
}

// A streaming chunk of /v1/chat/completions or /v1/completions.
export function renderStreamChunk(
  kind: ApiKind,
  c: ResponseCtx,
  text: string,
  finish: string | null,
  first: boolean,
): unknown {
  const choice =
    kind === 'chat'
      ? {
          index: 0,
          delta: first ? { role: 'assistant', content: text } : { content: text },
          logprobs: null,
          finish_reason: finish,
        }
      : { index: 0, text, logprobs: null, finish_reason: finish };
  return {
    id: c.id,
    object: kind === 'chat' ? 'chat.completion.chunk' : 'text_completion',
    created: c.created,
    model: c.model,
    choices: [choice],
    usage: null,
  };
}

// The usage object and the usage-only final chunk (stream_options.include_usage).
export function renderUsage(prompt: number, completion: number) {
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

// A complete (non-streaming) OpenAI response.
export function renderFullResponse(
  kind: ApiKind,
  c: ResponseCtx,
  text: string,
  finish: string,
  prompt: number,
  completion: number,
): unknown {
  const choice =
    kind === 'chat'
      ? {
          index: 0,
          message: { role: 'assistant', content: text, reasoning_content: null, tool_calls: null },
          logprobs: null,
          finish_reason: finish,
          matched_stop: null,
        }
      : { index: 0, text, logprobs: null, finish_reason: finish, matched_stop: null };
  return {
    id: c.id,
    object: kind === 'chat' ? 'chat.completion' : 'text_completion',
    created: c.created,
    model: c.model,
    choices: [choice],
    usage: renderUsage(prompt, completion),
  };
}

/** meta_info of SGLang's native /generate. */
export interface MetaInfo {
  id: string;
  finish_reason: unknown;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  e2e_latency?: number;
  spec_accept_length?: number;
  spec_verify_ct?: number;
}

// SGLang's finish_reason object for /generate.
export function renderFinishReason(reason: 'length' | 'stop' | null, completion: number): unknown {
  if (reason === null) return null;
  return reason === 'length' ? { type: 'length', length: completion } : { type: 'stop', matched: 151645 };
}
