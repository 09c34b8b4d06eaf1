// Strip the engines' own line prefixes (SGLang, vLLM, uvicorn) so patterns and tracebacks see the bare text.

import { ENGINE_NAMES, getEngine } from '../engines/registry.js';
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

/** torchrun / torch.distributed rank prefix: "[rank0]: ". */
const RANK_PREFIX = /^\[rank\d+\]: ?/;
/** A pasted line quoted in Markdown ("> ") and the RFC 3339 stamp that `docker logs -t`, `kubectl logs
 * --timestamps` and CI consoles put first ("2024-06-28T06:11:52.685300953Z ", "[2025-11-06T02:10:00.702Z] "). */
const QUOTE_MARK = /^> ?/;
const RFC3339_STAMP = /^\[?(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2}))\]? /;
/** docker compose prefixes every line with the service name and a bar: "llama-router-gpu  | ". */
const COMPOSE = /^[\w.-]+ +\| /;

// Split a message into its engine prefix facts and the bare text.
export function stripAppPrefix(message: string): AppLine {
  // Outer wrappers first, one of each at most: docker compose's "service  | ", then torch's "[rank0]: ".
  let body = message;
  let outer: string | null = null;
  let stamp: string | null = null;
  if (body.charCodeAt(0) === 62) {
    body = body.replace(QUOTE_MARK, '');
    outer = '';
  }
  const c0 = body.charCodeAt(0);
  if ((c0 >= 48 && c0 <= 57) || c0 === 91) {
    const t = RFC3339_STAMP.exec(body);
    if (t) {
      body = body.slice(t[0].length);
      stamp = t[1];
      outer = '';
    }
  }
  if (body.charCodeAt(0) !== 91 && body.charCodeAt(0) !== 40 && body.includes(' | ')) {
    const k = COMPOSE.exec(body);
    if (k) {
      body = body.slice(k[0].length);
      outer = '';
    }
  }
  if (body.charCodeAt(0) === 91) {
    const r = RANK_PREFIX.exec(body);
    if (r) {
      body = body.slice(r[0].length);
      outer = r[0].slice(1, r[0].indexOf(']'));
    }
  }
  const inner = stripEnginePrefix(body);
  return outer === null
    ? inner
    : { ...inner, prefixed: true, tag: inner.tag ?? (outer || null), appTs: inner.appTs ?? stamp };
}

// The registered engines' log dialects, read once.
const DIALECTS = ENGINE_NAMES.map((name) => ({ name, ...getEngine(name).logDialect }));

// The engine's own prefix (each adapter's logDialect: a head, after an optional process tag; else a tag alone; else a
// hint) of a message without outer wrappers.
function stripEnginePrefix(message: string): AppLine {
  for (const d of DIALECTS) {
    if (!d.head) continue;
    let rest = message;
    let tag: string | null = null;
    const t = d.processTag?.exec(message);
    if (t) {
      tag = t[1];
      rest = message.slice(t[0].length);
    }
    const m = d.head.exec(rest);
    if (m) return { text: rest.slice(m[0].length), prefixed: true, tag, appTs: m[1], dialect: d.name, head: m[0] };
  }
  for (const d of DIALECTS) {
    const t = d.processTag?.exec(message);
    if (t)
      return {
        text: message.slice(t[0].length),
        prefixed: true,
        tag: t[1],
        appTs: null,
        dialect: d.foreignTag?.test(t[1]) ? null : d.name,
        head: '',
      };
  }
  const hinted = DIALECTS.find((d) => d.hint?.test(message));
  const dialect = hinted ? hinted.name : null;
  return { text: message, prefixed: dialect !== null, tag: null, appTs: null, dialect, head: '' };
}
