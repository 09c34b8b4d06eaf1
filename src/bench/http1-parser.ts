// Pure HTTP/1.1 response parser for the benchmark's own transport: status, the few headers that matter, and
// the body (chunked, content-length or until close) handed on as byte ranges of the network buffer, without copies.

const LF = 0x0a;
const CR = 0x0d;
const SEMI = 0x3b;
// A response head larger than this is not from an inference server; refuse it rather than buffer without bound.
const MAX_HEAD_CHARS = 64 * 1024;

// biome-ignore lint/suspicious/noConstEnum: tsc inlines the states into the per-byte loop; the enum never leaves this file
const enum State {
  Head,
  Length,
  ChunkSize,
  ChunkExt,
  ChunkData,
  ChunkEnd,
  Trailers,
  UntilClose,
  Done,
}

/** What the parser reports; body ranges are only valid during the call. */
export interface Http1Handler {
  onHead(status: number, headers: Map<string, string>): void;
  onBody(buf: Uint8Array, start: number, end: number): void;
  onEnd(): void;
}

/** Incremental parser of one response at a time; `reset()` readies it for the next one on the same connection. */
export class Http1ResponseParser {
  private state = State.Head;
  private head = '';
  private remaining = 0;
  private lineLen = 0;
  private len = 0;
  /** The server asked to close the connection after this response. */
  closeAfter = false;
  /** A protocol error, once one is seen (the connection is unusable). */
  error: string | null = null;

  constructor(private readonly h: Http1Handler) {}

  // Prepare for the next response on a kept-alive connection.
  reset(): void {
    this.state = State.Head;
    this.head = '';
    this.closeAfter = false;
    this.error = null;
  }

  // True once the whole response has been read.
  get done(): boolean {
    return this.state === State.Done;
  }

  // True when the body runs until the connection closes (no length, not chunked).
  get endsAtClose(): boolean {
    return this.state === State.UntilClose;
  }

  // Feed bytes read from the connection: buf[start, len).
  push(buf: Uint8Array, len = buf.length, start = 0): void {
    let p = start;
    this.len = len;
    while (p < len && this.state !== State.Done && this.error === null) {
      switch (this.state) {
        case State.Head:
          p = this.readHead(buf, p);
          break;
        case State.Length:
          p = this.readLength(buf, p);
          break;
        case State.ChunkSize:
          p = this.readChunkSize(buf, p);
          break;
        case State.ChunkExt:
          p = this.skipLine(buf, p, State.ChunkData);
          break;
        case State.ChunkData:
          p = this.readChunkData(buf, p);
          break;
        case State.ChunkEnd:
          p = this.skipLine(buf, p, State.ChunkSize);
          break;
        case State.Trailers:
          p = this.readTrailers(buf, p);
          break;
        default:
          this.h.onBody(buf, p, len);
          p = len;
      }
    }
  }

  // The connection closed: a body that runs until close is complete now.
  closed(): void {
    if (this.state === State.UntilClose) {
      this.state = State.Done;
      this.h.onEnd();
    }
  }

  private readHead(buf: Uint8Array, p: number): number {
    const before = this.head.length;
    this.head += Buffer.from(buf.buffer, buf.byteOffset + p, this.len - p).toString('latin1');
    const idx = this.head.indexOf('\r\n\r\n');
    if (idx < 0) {
      if (this.head.length > MAX_HEAD_CHARS) this.error = 'response head too large';
      return this.len;
    }
    const next = p + idx + 4 - before;
    this.parseHead(this.head.slice(0, idx));
    return next;
  }

  private parseHead(text: string): void {
    const lines = text.split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]);
    if (!m) {
      this.error = `not an HTTP/1.1 response: ${JSON.stringify(lines[0].slice(0, 80))}`;
      return;
    }
    const headers = new Map<string, string>();
    for (let i = 1; i < lines.length; i++) {
      const c = lines[i].indexOf(':');
      if (c > 0) headers.set(lines[i].slice(0, c).trim().toLowerCase(), lines[i].slice(c + 1).trim());
    }
    const status = Number(m[1]);
    this.closeAfter = /close/i.test(headers.get('connection') ?? '') || lines[0].startsWith('HTTP/1.0');
    this.h.onHead(status, headers);
    this.startBody(status, headers);
  }

  private startBody(status: number, headers: Map<string, string>): void {
    const length = headers.get('content-length');
    if (/chunked/i.test(headers.get('transfer-encoding') ?? '')) {
      this.state = State.ChunkSize;
      this.remaining = 0;
    } else if (length !== undefined || status === 204 || status === 304) {
      // RFC 9112 6.3: a Content-Length that is not a non-negative decimal integer makes the message unreadable.
      if (length !== undefined && !/^\d{1,15}$/.test(length)) {
        this.error = `bad content-length: ${JSON.stringify(length.slice(0, 40))}`;
        return;
      }
      this.remaining = Number(length ?? 0);
      this.state = State.Length;
      if (this.remaining === 0) this.finish();
    } else {
      this.state = State.UntilClose;
      this.closeAfter = true;
    }
  }

  private finish(): void {
    this.state = State.Done;
    this.h.onEnd();
  }

  private readLength(buf: Uint8Array, p: number): number {
    const n = Math.min(this.remaining, this.len - p);
    this.h.onBody(buf, p, p + n);
    this.remaining -= n;
    if (this.remaining === 0) this.finish();
    return p + n;
  }

  private readChunkSize(buf: Uint8Array, p: number): number {
    while (p < this.len) {
      const c = buf[p++];
      const d = hexValue(c);
      if (d >= 0) {
        this.remaining = this.remaining * 16 + d;
      } else if (c === LF || c === SEMI) {
        if (c === SEMI) this.state = State.ChunkExt;
        else this.state = State.ChunkData;
        if (this.remaining === 0 && c === LF) {
          this.state = State.Trailers;
          this.lineLen = 0;
        }
        return p;
      } else if (c !== CR && c !== 0x20) {
        this.error = 'bad chunk size';
        return p;
      }
    }
    return p;
  }

  private skipLine(buf: Uint8Array, p: number, next: State): number {
    const nl = buf.indexOf(LF, p);
    if (nl < 0 || nl >= this.len) return this.len;
    this.state = next;
    if (next === State.ChunkSize) this.remaining = 0;
    if (next === State.ChunkData && this.remaining === 0) {
      this.state = State.Trailers;
      this.lineLen = 0;
    }
    return nl + 1;
  }

  private readChunkData(buf: Uint8Array, p: number): number {
    const n = Math.min(this.remaining, this.len - p);
    if (n > 0) this.h.onBody(buf, p, p + n);
    this.remaining -= n;
    if (this.remaining === 0) this.state = State.ChunkEnd;
    return p + n;
  }

  private readTrailers(buf: Uint8Array, p: number): number {
    while (p < this.len) {
      const c = buf[p++];
      if (c === LF) {
        if (this.lineLen === 0) {
          this.finish();
          return p;
        }
        this.lineLen = 0;
      } else if (c !== CR) {
        this.lineLen++;
      }
    }
    return p;
  }
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}
