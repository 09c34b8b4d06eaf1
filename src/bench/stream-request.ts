// One streamed request on a kept-alive connection, shared by the socket transports (raw net.Socket, native reader):
// HTTP/1.1 parse -> SSE scan -> token timeline, keep-alive pooling and the retry of a request that met a stale
// connection. The transports differ only in how bytes arrive and when they were received.
import type { PlannedRequest } from './api.js';
import { Http1ResponseParser } from './http1-parser.js';
import { RequestTimeline } from './metrics.js';
import { SseScanner } from './sse.js';
import { createRequestState, type InFlight, type RequestState } from './request-state.js';

// Error bodies are kept only this far.
const MAX_ERROR_BODY = 2048;

/** A pooled connection as the request sees it; subclasses move the bytes. */
export abstract class PooledConn {
  readonly parser: Http1ResponseParser;
  req: StreamRequest | null = null;
  connected = false;
  /** Responses completed on this connection: a failure on a reused one may be a keep-alive race. */
  served = 0;

  constructor(protected readonly pool: KeepAlivePool<PooledConn>) {
    this.parser = new Http1ResponseParser({
      onHead: (status) => this.req?.onHead(status),
      onBody: (buf, s, e) => this.req?.onBody(buf, s, e),
      onEnd: () => this.onEnd(),
    });
  }

  // Send the request bytes.
  abstract write(wire: string): void;
  // Tear the connection down; onClosed follows.
  abstract destroy(): void;
  // When the bytes being parsed were received (ms, the benchmark's clock).
  abstract stamp(): number;

  // Bytes arrived: buf[start, end).
  protected onBytes(buf: Uint8Array, end: number, start: number): void {
    this.parser.push(buf, end, start);
    if (this.parser.error !== null) this.req?.failProtocol(this.parser.error);
  }

  protected onConnected(): void {
    this.connected = true;
    this.req?.onConnected();
  }

  private onEnd(): void {
    const r = this.req;
    this.req = null;
    this.served++;
    if (this.parser.closeAfter) this.destroy();
    else this.pool.release(this);
    r?.onEnd();
  }

  protected onClosed(error: string | null): void {
    this.pool.forget(this);
    this.parser.closed();
    const r = this.req;
    this.req = null;
    r?.onClosed(error, this.connected, this.served > 0);
  }
}

/** The keep-alive pool of one benchmark: idle connections are reused most-recent first. */
export class KeepAlivePool<C extends PooledConn> {
  private readonly idle: C[] = [];
  private readonly all = new Set<C>();
  constructor(private readonly open: (pool: KeepAlivePool<C>) => C) {}

  acquire(fresh: boolean): C {
    const c = fresh ? undefined : this.idle.pop();
    if (c) return c;
    const n = this.open(this);
    this.all.add(n);
    return n;
  }

  release(c: C): void {
    c.parser.reset();
    this.idle.push(c);
  }

  forget(c: C): void {
    this.all.delete(c);
    const i = this.idle.indexOf(c);
    if (i >= 0) this.idle.splice(i, 1);
  }

  destroy(): void {
    for (const c of this.all) c.destroy();
  }
}

/** One request on a pooled connection. */
export class StreamRequest {
  private conn: PooledConn | null = null;
  private status = 0;
  private errorBody = '';
  private retried = false;

  constructor(
    private readonly pool: KeepAlivePool<PooledConn>,
    private readonly wire: string,
    private readonly st: RequestState,
  ) {}

  start(fresh: boolean): void {
    const c = this.pool.acquire(fresh);
    this.conn = c;
    c.req = this;
    if (c.connected) this.onConnected();
    c.write(this.wire);
  }

  onConnected(): void {
    if (this.st.inflight.phase === 'connect') this.st.inflight.phase = 'first';
  }

  onHead(status: number): void {
    this.status = status;
    if (this.conn) this.st.inflight.lastActivityMs = this.conn.stamp();
  }

  onBody(buf: Uint8Array, s: number, e: number): void {
    if (this.status < 200 || this.status >= 300) {
      if (this.errorBody.length < MAX_ERROR_BODY)
        this.errorBody += Buffer.from(buf.buffer, buf.byteOffset + s, e - s).toString('utf8');
      return;
    }
    const n = this.st.inflight.scanner.push(buf, s, e);
    if (n === 0 || !this.conn) return;
    const t = this.conn.stamp();
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
    else
      this.st.finish(
        false,
        'endedEarly',
        `connection closed after ${this.st.inflight.timeline.frames} token frames${error ? `: ${error}` : ''}`,
      );
  }

  failProtocol(error: string): void {
    this.st.inflight.fail('endedEarly', `bad response: ${error}`);
  }

  abort(): void {
    this.conn?.destroy();
  }
}

// Build the request text once: request line, headers, body.
function renderWire(url: URL, plan: { headers: Record<string, string>; body: string }): string {
  let head = `POST ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\nconnection: keep-alive\r\n`;
  for (const [k, v] of Object.entries(plan.headers)) head += `${k}: ${v}\r\n`;
  return `${head}\r\n${plan.body}`;
}

// The host (IPv6 brackets removed) and port of a base URL, for opening sockets to it.
export function hostAndPort(base: URL): { host: string; port: number } {
  return { host: base.hostname.replace(/^\[|\]$/g, ''), port: Number(base.port || 80) };
}

// Send one request on a keep-alive pool: its timeline and state, started on an idle or a new connection.
export function sendOnPool(
  pool: KeepAlivePool<PooledConn>,
  url: URL,
  plan: PlannedRequest,
  id: string,
  now: () => number,
  expectedFrames: number,
  startMs: number | null,
): InFlight {
  const timeline = new RequestTimeline(startMs ?? now(), expectedFrames);
  let req: StreamRequest | null = null;
  const st = createRequestState(id, timeline, new SseScanner(), now, () => req?.abort());
  req = new StreamRequest(pool, renderWire(url, plan), st);
  req.start(false);
  return st.inflight;
}
