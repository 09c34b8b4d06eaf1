// Pure SSE scanner for streamed completions: finds `data:` lines in raw bytes (chunk boundaries anywhere) and
// classifies them with a byte scan instead of JSON.parse, so the client spends well under a microsecond per token.

const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const SPACE = 0x20;
const COLON = 0x3a;
const BACKSLASH = 0x5c;
const DATA = bytes('data:');
const DONE = bytes('[DONE]');
const EMPTY = new Uint8Array(0);
// Keys are matched right after an opening quote; `content"` also covers chat deltas, `text"` completions and
// SGLang's native /generate, `reasoning_content"` reasoning models that stream thoughts before the answer.
const KEY_CONTENT = bytes('content"');
const KEY_REASONING = bytes('reasoning_content"');
const KEY_TEXT = bytes('text"');
const KEY_COMPLETION = bytes('completion_tokens"');
const KEY_PROMPT = bytes('prompt_tokens"');
const KEY_ERROR = bytes('error"');
// llama-server's `timings` object (final chunk; tools/server/server-common.cpp server_slot_stats::to_json).
const KEY_DRAFT_N = bytes('draft_n"');
const KEY_DRAFT_ACCEPTED = bytes('draft_n_accepted"');
const KEY_PREDICTED_N = bytes('predicted_n"');
// An error frame is kept for the message, cut to a readable length.
const MAX_ERROR_CHARS = 300;
// A line longer than this without a newline is not SSE; stop buffering it (bounded memory per request).
const MAX_LINE_BYTES = 4 * 1024 * 1024;

function bytes(s: string): Uint8Array {
  return new TextEncoder().encode(s);
}

// Does `key` occur in buf at position i (bounded by end)?
function matchAt(buf: Uint8Array, i: number, end: number, key: Uint8Array): boolean {
  if (i + key.length > end) return false;
  for (let k = 0; k < key.length; k++) if (buf[i + k] !== key[k]) return false;
  return true;
}

// Skip `:` and spaces after a key; returns the index of the value's first byte.
function skipColon(buf: Uint8Array, i: number, end: number): number {
  while (i < end && (buf[i] === SPACE || buf[i] === COLON)) i++;
  return i;
}

// Read a non-negative integer at i, or -1.
function readInt(buf: Uint8Array, i: number, end: number): number {
  let n = -1;
  while (i < end) {
    const c = buf[i] - 0x30;
    if (c < 0 || c > 9) break;
    n = (n < 0 ? 0 : n * 10) + c;
    i++;
  }
  return n;
}

/** What one stream has said so far: token-bearing frames, server usage, end marker, error frames. */
export class SseScanner {
  /** `data:` frames that carried generated text (one per decode step the server streamed). */
  tokenFrames = 0;
  /** Last `completion_tokens` the server reported (usage chunk or SGLang meta_info), or -1. */
  completionTokens = -1;
  /** Last `prompt_tokens` the server reported, or -1. */
  promptTokens = -1;
  /** llama-server's per-request draft counts (`timings.draft_n`, `timings.draft_n_accepted`) and generated
   *  tokens (`timings.predicted_n`), or -1 when the stream did not carry them. */
  draftTokens = -1;
  draftAccepted = -1;
  predictedTokens = -1;
  /** `data: [DONE]` seen. */
  done = false;
  /** Payload of an error frame, if the server streamed one. */
  errorMessage: string | null = null;
  private carry: Uint8Array | null = null;

  // Feed the next bytes of the response body (buf[start, end) — no copy needed); returns how many token-bearing
  // frames completed in them.
  push(buf: Uint8Array, start = 0, end = buf.length): number {
    let pos = start;
    let tokens = 0;
    if (this.carry !== null) {
      const nl = buf.indexOf(LF, pos);
      if (nl < 0 || nl >= end) {
        this.appendCarry(buf.subarray(pos, end));
        return 0;
      }
      const line = concatBytes(this.carry, buf.subarray(pos, nl + 1));
      this.carry = null;
      tokens += this.scanLine(line, 0, line.length - 1);
      pos = nl + 1;
    }
    while (pos < end) {
      const nl = buf.indexOf(LF, pos);
      if (nl < 0 || nl >= end) {
        this.appendCarry(buf.subarray(pos, end));
        break;
      }
      tokens += this.scanLine(buf, pos, nl);
      pos = nl + 1;
    }
    this.tokenFrames += tokens;
    return tokens;
  }

  private appendCarry(part: Uint8Array): void {
    // Always a copy: `part` may be a view of a read buffer that the transport reuses.
    const next = concatBytes(this.carry ?? EMPTY, part);
    this.carry = next.length > MAX_LINE_BYTES ? null : next;
  }

  // Classify one line [start, end) (end excludes the LF); returns 1 for a token-bearing data line.
  private scanLine(buf: Uint8Array, start: number, end: number): number {
    if (end > start && buf[end - 1] === CR) end--;
    if (!matchAt(buf, start, end, DATA)) return 0;
    let p = start + DATA.length;
    if (p < end && buf[p] === SPACE) p++;
    if (matchAt(buf, p, end, DONE)) {
      this.done = true;
      return 0;
    }
    return this.scanJson(buf, p, end);
  }

  // Scan a JSON payload for the few keys that matter; JSON strings escape quotes, so values cannot fake a key.
  private scanJson(buf: Uint8Array, p: number, end: number): number {
    let token = 0;
    for (let i = p; i < end; i++) {
      if (buf[i] !== QUOTE || buf[i - 1] === BACKSLASH) continue;
      const k = i + 1;
      const c = buf[k];
      if (c === 0x63 /* c */) {
        if (matchAt(buf, k, end, KEY_CONTENT)) token |= hasText(buf, skipColon(buf, k + KEY_CONTENT.length, end), end);
        else if (matchAt(buf, k, end, KEY_COMPLETION))
          this.completionTokens = readInt(buf, skipColon(buf, k + KEY_COMPLETION.length, end), end);
      } else if (c === 0x74 /* t */) {
        if (matchAt(buf, k, end, KEY_TEXT)) token |= hasText(buf, skipColon(buf, k + KEY_TEXT.length, end), end);
      } else if (c === 0x72 /* r */) {
        if (matchAt(buf, k, end, KEY_REASONING))
          token |= hasText(buf, skipColon(buf, k + KEY_REASONING.length, end), end);
      } else if (c === 0x70 /* p */) {
        if (matchAt(buf, k, end, KEY_PROMPT))
          this.promptTokens = readInt(buf, skipColon(buf, k + KEY_PROMPT.length, end), end);
        else if (matchAt(buf, k, end, KEY_PREDICTED_N))
          this.predictedTokens = readInt(buf, skipColon(buf, k + KEY_PREDICTED_N.length, end), end);
      } else if (c === 0x64 /* d */) {
        if (matchAt(buf, k, end, KEY_DRAFT_N))
          this.draftTokens = readInt(buf, skipColon(buf, k + KEY_DRAFT_N.length, end), end);
        else if (matchAt(buf, k, end, KEY_DRAFT_ACCEPTED))
          this.draftAccepted = readInt(buf, skipColon(buf, k + KEY_DRAFT_ACCEPTED.length, end), end);
      } else if (
        c === 0x65 /* e */ &&
        matchAt(buf, k, end, KEY_ERROR) &&
        buf[skipColon(buf, k + KEY_ERROR.length, end)] !== 0x6e /* null */
      ) {
        this.errorMessage = new TextDecoder().decode(buf.subarray(p, end)).slice(0, MAX_ERROR_CHARS);
      }
    }
    return token;
  }
}

// A string value that is not empty: an opening quote followed by anything but the closing quote.
function hasText(buf: Uint8Array, i: number, end: number): number {
  return i + 1 < end && buf[i] === QUOTE && buf[i + 1] !== QUOTE ? 1 : 0;
}

function concatBytes(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
