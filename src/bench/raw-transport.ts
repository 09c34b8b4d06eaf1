// Plain-HTTP transport on bare TCP sockets: one write per request, a keep-alive pool, and response bytes going
// from the socket straight through the HTTP/1.1 parser into the SSE scanner — no streams, no per-chunk objects.
// node:http spends several microseconds per chunk in llhttp callbacks and Readable machinery; this does not.
import net from 'node:net';
import type { PlannedRequest } from './api.js';
import { Http1ResponseParser } from './http1-parser.js';
import { RequestTimeline } from './metrics.js';
import { SseScanner } from './sse.js';
import { createRequestState, type InFlight, type RequestState, type Transport } from './transport.js';

// One read buffer for every connection (reads are handled synchronously, one at a time): 256 KiB covers
// the largest burst a socket delivers in one read without splitting it.
const READ_BUFFER = Buffer.allocUnsafe(256 * 1024);
// Error bodies are kept only this far.
const MAX_ERROR_BODY = 2048;

/** One pooled connection; `req` is the request it is serving, if any. */
class Conn {
  readonly socket: net.Socket;
  readonly parser: Http1ResponseParser;
  req: RawRequest | null = null;
  connected = false;
  /** Responses completed on this connection: a failure on a reused one may be a keep-alive race. */
  served = 0;

  constructor(host: string, port: number, private readonly pool: RawPool) {
    this.parser = new Http1ResponseParser({
      onHead: (status) => this.req?.onHead(status),
      onBody: (buf, s, e) => this.req?.onBody(buf, s, e),
      onEnd: () => this.onEnd(),
    });
    // `onread` reads into one shared buffer: no Buffer per read, no Readable stream machinery. Everything
    // downstream either finishes with the bytes synchronously or copies what it keeps.
    const onread = { buffer: READ_BUFFER, callback: (n: number, buf: Uint8Array): boolean => this.onRead(n, buf) };
    this.socket = net.connect({ host, port, noDelay: true, onread });
    this.socket.on('connect', () => {
      this.connected = true;
      this.req?.onConnected();
    });
    this.socket.on('error', (e: NodeJS.ErrnoException) => this.onClose(`${e.code ?? e.name}: ${e.message}`));
    this.socket.on('close', () => this.onClose(null));
  }

  private onRead(n: number, buf: Uint8Array): boolean {
    this.parser.push(buf, n);
    if (this.parser.error !== null) this.req?.failProtocol(this.parser.error);
    return true;
  }

  private onEnd(): void {
    const r = this.req;
    this.req = null;
    this.served++;
    if (this.parser.closeAfter) this.socket.destroy();
    else this.pool.release(this);
    r?.onEnd();
  }

  private onClose(error: string | null): void {
    this.pool.forget(this);
    this.parser.closed();
    const r = this.req;
    this.req = null;
    r?.onClosed(error, this.connected, this.served > 0);
  }
}

/** The keep-alive pool of one benchmark: idle connections are reused most-recent first. */
class RawPool {
  private readonly idle: Conn[] = [];
  private readonly all = new Set<Conn>();
  constructor(readonly host: string, readonly port: number) {}

  acquire(fresh: boolean): Conn {
    const c = fresh ? undefined : this.idle.pop();
    if (c) return c;
    const n = new Conn(this.host, this.port, this);
    this.all.add(n);
    return n;
  }

  release(c: Conn): void {
    c.parser.reset();
    this.idle.push(c);
  }

  forget(c: Conn): void {
    this.all.delete(c);
    const i = this.idle.indexOf(c);
    if (i >= 0) this.idle.splice(i, 1);
  }

  destroy(): void {
    for (const c of this.all) c.socket.destroy();
  }
}

/** One request on a pooled connection. */
class RawRequest {
  private conn: Conn | null = null;
  private status = 0;
  private errorBody = '';
  private retried = false;

  constructor(private readonly pool: RawPool, private readonly wire: string, private readonly st: RequestState, private readonly now: () => number) {}

  start(fresh: boolean): void {
    const c = this.pool.acquire(fresh);
    this.conn = c;
    c.req = this;
    if (c.connected) this.onConnected();
    c.socket.write(this.wire);
  }

  onConnected(): void {
    if (this.st.inflight.phase === 'connect') this.st.inflight.phase = 'first';
  }

  onHead(status: number): void {
    this.status = status;
    this.st.inflight.lastActivityMs = this.now();
  }

  onBody(buf: Uint8Array, s: number, e: number): void {
    if (this.status < 200 || this.status >= 300) {
      if (this.errorBody.length < MAX_ERROR_BODY) this.errorBody += Buffer.from(buf.buffer, buf.byteOffset + s, e - s).toString('utf8');
      return;
    }
    const n = this.st.inflight.scanner.push(buf, s, e);
    if (n === 0) return;
    const t = this.now();
    this.st.inflight.timeline.onFrames(n, t);
    this.st.inflight.lastActivityMs = t;
    this.st.inflight.phase = 'stream';
  }

  onEnd(): void {
    this.conn = null;
    if (this.status < 200 || this.status >= 300) {
      const text = this.errorBody.slice(0, MAX_ERROR_BODY).replace(/\s+/g, ' ').trim();
      this.st.finish(false, 'httpStatus', `HTTP ${this.status}${text ? `: ${text}` : ''}`);
    } else {
      this.st.finishStream();
    }
  }

  // The connection went away mid-request. A reused keep-alive socket that the server had just closed is retried
  // once on a fresh connection (the request never reached the server); anything else is a failure by phase.
  onClosed(error: string | null, connected: boolean, reused: boolean): void {
    this.conn = null;
    const nothingYet = this.status === 0 && this.st.inflight.timeline.frames === 0;
    if (nothingYet && reused && connected && !this.retried && !this.st.settled) {
      this.retried = true;
      this.start(true);
      return;
    }
    if (!connected) this.st.finish(false, 'connect', error ?? 'connection closed before it was established');
    else this.st.finish(false, 'endedEarly', `connection closed after ${this.st.inflight.timeline.frames} token frames${error ? `: ${error}` : ''}`);
  }

  failProtocol(error: string): void {
    this.st.inflight.fail('endedEarly', `bad response: ${error}`);
  }

  abort(): void {
    this.conn?.socket.destroy();
  }
}

// Token timestamps: every socket that epoll reported in one event-loop wake-up was readable when the loop woke,
// so the batch's first clock reading is their arrival time; stamping each read on its own would add the time
// spent on the sockets before it (milliseconds at high concurrency). A batch that runs longer than
// MAX_BATCH_MS means the client is saturated and later sockets may hold newer data: stamp those per read.
const MAX_BATCH_MS = 2;
const batches = new WeakMap<() => number, () => number>();
function batchClock(now: () => number): () => number {
  let clock = batches.get(now);
  if (!clock) {
    clock = createBatchClock(now);
    batches.set(now, clock);
  }
  return clock;
}

// A clock that returns the first reading of the current event-loop turn (for up to MAX_BATCH_MS).
export function createBatchClock(now: () => number): () => number {
  let batchStart = -1;
  const clear = (): void => { batchStart = -1; };
  return () => {
    const t = now();
    if (batchStart < 0) setImmediate(clear);
    if (batchStart < 0 || t - batchStart > MAX_BATCH_MS) batchStart = t;
    return batchStart;
  };
}

// Build the request text once: request line, headers, body.
function renderWire(url: URL, plan: PlannedRequest): string {
  let head = `POST ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\nconnection: keep-alive\r\n`;
  for (const [k, v] of Object.entries(plan.headers)) head += `${k}: ${v}\r\n`;
  return `${head}\r\n${plan.body}`;
}

// A transport for http:// URLs on the raw pool.
export function createRawTransport(base: URL, getText: Transport['getText']): Transport {
  const pool = new RawPool(base.hostname.replace(/^\[|\]$/g, ''), Number(base.port || 80));
  return {
    send(url, plan, id, now, expectedFrames, startMs) {
      const timeline = new RequestTimeline(startMs ?? now(), expectedFrames);
      let req: RawRequest | null = null;
      const st = createRequestState(id, timeline, new SseScanner(), now, () => req?.abort());
      req = new RawRequest(pool, renderWire(url, plan), st, batchClock(now));
      req.start(false);
      return st.inflight;
    },
    getText,
    close: () => pool.destroy(),
  };
}

