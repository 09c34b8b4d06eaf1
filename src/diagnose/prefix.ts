// Strip the engines' own line prefixes (SGLang, vLLM, uvicorn) so patterns and tracebacks see the bare text.

import type { EngineName } from '../engines/types.js';

/** The engine dialects diagnose knows: one per engine of the registry. */
export type Dialect = EngineName;

/** A message with its application prefix removed. */
export interface AppLine {
  text: string;
  /** True when a known engine prefix was removed (the line starts a new log record). */
  prefixed: boolean;
  /** vLLM process tag ("EngineCore_DP0 pid=212"): continuation lines repeat it, so it separates processes. */
  tag: string | null;
  /** The engine's own timestamp text, if any. */
  appTs: string | null;
  /** Dialect the prefix betrays, if any. */
  dialect: Dialect | null;
  /** The removed prefix without the process tag: vLLM repeats it on every line of one record. */
  head: string;
}

const SGLANG = /^\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})((?: [A-Z]{2}\d+)*)\] /;
/** vLLM / Ray process tags: "(EngineCore_DP0 pid=212)", "(VllmWorker rank=5 pid=45037)", "(RayWorkerWrapper pid=1, ip=10.0.0.2)", "(raylet)". */
const VLLM_TAG = /^\(((?:[\w.-]+(?: [\w.-]+=[\w.:-]+)*,? pid=\d+(?:, ip=[\d.]+)?)|raylet(?:, ip=[\d.]+)?)\) /;
/** torchrun / torch.distributed rank prefix: "[rank0]: ". */
const RANK_PREFIX = /^\[rank\d+\]: ?/;
const VLLM_LOG = /^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) (\d{2}-\d{2} \d{2}:\d{2}:\d{2})(?:\.\d+)? (?:\[[^\]]+\]|\S+:\d+\]) /;
/** A pasted line quoted in Markdown ("> ") and the RFC 3339 stamp that `docker logs -t`, `kubectl logs
 * --timestamps` and CI consoles put first ("2024-06-28T06:11:52.685300953Z ", "[2025-11-06T02:10:00.702Z] "). */
const QUOTE_MARK = /^> ?/;
const RFC3339_STAMP = /^\[?(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2}))\]? /;
/** docker compose prefixes every line with the service name and a bar: "llama-router-gpu  | ". */
const COMPOSE = /^[\w.-]+ +\| /;
const LLAMA_HINT = /^(?:llama_|ggml_|gguf_|srv {1,4}\w|slot {1,6}\w|main: |common_|load_tensors:|print_info:|build: )/;

// Split a message into its engine prefix facts and the bare text.
export function stripAppPrefix(message: string): AppLine {
  // Outer wrappers first, one of each at most: docker compose's "service  | ", then torch's "[rank0]: ".
  let body = message;
  let outer: string | null = null;
  let stamp: string | null = null;
  if (body.charCodeAt(0) === 62) { body = body.replace(QUOTE_MARK, ''); outer = ''; }
  const c0 = body.charCodeAt(0);
  if ((c0 >= 48 && c0 <= 57) || c0 === 91) {
    const t = RFC3339_STAMP.exec(body);
    if (t) { body = body.slice(t[0].length); stamp = t[1]; outer = ''; }
  }
  if (body.charCodeAt(0) !== 91 && body.charCodeAt(0) !== 40 && body.includes(' | ')) {
    const k = COMPOSE.exec(body);
    if (k) { body = body.slice(k[0].length); outer = ''; }
  }
  if (body.charCodeAt(0) === 91) {
    const r = RANK_PREFIX.exec(body);
    if (r) { body = body.slice(r[0].length); outer = r[0].slice(1, r[0].indexOf(']')); }
  }
  const inner = stripEnginePrefix(body);
  return outer === null ? inner : { ...inner, prefixed: true, tag: inner.tag ?? (outer || null), appTs: inner.appTs ?? stamp };
}

// The engine's own prefix (SGLang, vLLM, llama.cpp hints) of a message without outer wrappers.
function stripEnginePrefix(message: string): AppLine {
  const c = message.charCodeAt(0);
  if (c === 91) {
    const m = SGLANG.exec(message);
    if (m) return { text: message.slice(m[0].length), prefixed: true, tag: null, appTs: m[1], dialect: 'sglang', head: m[0] };
  }
  let rest = message;
  let tag: string | null = null;
  if (c === 40) {
    const t = VLLM_TAG.exec(message);
    if (t) { tag = t[1]; rest = message.slice(t[0].length); }
  }
  const v = VLLM_LOG.exec(rest);
  if (v) return { text: rest.slice(v[0].length), prefixed: true, tag, appTs: v[1], dialect: 'vllm', head: v[0] };
  if (tag) return { text: rest, prefixed: true, tag, appTs: null, dialect: tag.startsWith('raylet') ? null : 'vllm', head: '' };
  const dialect = LLAMA_HINT.test(message) ? 'llamacpp' : null;
  return { text: message, prefixed: dialect !== null, tag: null, appTs: null, dialect, head: '' };
}
