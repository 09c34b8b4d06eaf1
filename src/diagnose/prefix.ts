// Strip the engines' own line prefixes (SGLang, vLLM, uvicorn) so patterns and tracebacks see the bare text.

/** The engine dialects diagnose knows. */
export type Dialect = 'sglang' | 'vllm' | 'llamacpp';

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
const VLLM_TAG = /^\(([\w.-]+ pid=\d+)\) /;
const VLLM_LOG = /^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) (\d{2}-\d{2} \d{2}:\d{2}:\d{2})(?:\.\d+)? (?:\[[^\]]+\]|\S+:\d+\]) /;
const LLAMA_HINT = /^(?:llama_|ggml_|gguf_|srv {1,4}\w|slot {1,6}\w|main: |common_|load_tensors:|print_info:|build: )/;

// Split a message into its engine prefix facts and the bare text.
export function stripAppPrefix(message: string): AppLine {
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
  if (tag) return { text: rest, prefixed: true, tag, appTs: null, dialect: 'vllm', head: '' };
  const dialect = LLAMA_HINT.test(message) ? 'llamacpp' : null;
  return { text: message, prefixed: dialect !== null, tag: null, appTs: null, dialect, head: '' };
}
