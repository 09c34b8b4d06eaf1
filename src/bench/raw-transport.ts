// Plain-HTTP transport on bare TCP sockets: one write per request, a keep-alive pool, and response bytes going
// from the socket straight through the HTTP/1.1 parser into the SSE scanner — no streams, no per-chunk objects.
// node:http spends several microseconds per chunk in llhttp callbacks and Readable machinery; this does not.
import net from 'node:net';
import { KeepAlivePool, PooledConn, hostAndPort, sendOnPool } from './stream-request.js';
import type { Transport } from './transport.js';

// One read buffer for every connection (reads are handled synchronously, one at a time): 256 KiB covers
// the largest burst a socket delivers in one read without splitting it.
const READ_BUFFER = Buffer.allocUnsafe(256 * 1024);

/** One pooled net.Socket; bytes are stamped with the event-loop wake-up that delivered them. */
class RawConn extends PooledConn {
  private readonly socket: net.Socket;

  constructor(
    host: string,
    port: number,
    pool: KeepAlivePool<PooledConn>,
    private readonly clock: { now: () => number },
  ) {
    super(pool);
    // `onread` reads into one shared buffer: no Buffer per read, no Readable stream machinery. Everything
    // downstream either finishes with the bytes synchronously or copies what it keeps.
    const onread = {
      buffer: READ_BUFFER,
      callback: (n: number, buf: Uint8Array): boolean => {
        this.onBytes(buf, n, 0);
        return true;
      },
    };
    this.socket = net.connect({ host, port, noDelay: true, onread });
    this.socket.on('connect', () => this.onConnected());
    this.socket.on('error', (e: NodeJS.ErrnoException) => this.onClosed(`${e.code ?? e.name}: ${e.message}`));
    this.socket.on('close', () => this.onClosed(null));
  }

  write(wire: string): void {
    this.socket.write(wire);
  }

  destroy(): void {
    this.socket.destroy();
  }

  stamp(): number {
    return this.clock.now();
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
  const clear = (): void => {
    batchStart = -1;
  };
  return () => {
    const t = now();
    if (batchStart < 0) setImmediate(clear);
    if (batchStart < 0 || t - batchStart > MAX_BATCH_MS) batchStart = t;
    return batchStart;
  };
}

// A transport for http:// URLs on net.Socket connections.
export function createRawTransport(base: URL, getText: Transport['getText']): Transport {
  const clock = { now: (): number => performance.now() };
  const { host, port } = hostAndPort(base);
  const pool = new KeepAlivePool<PooledConn>((p) => new RawConn(host, port, p, clock));
  return {
    name: 'js',
    send(url, plan, id, now, expectedFrames, startMs) {
      clock.now = batchClock(now);
      return sendOnPool(pool, url, plan, id, now, expectedFrames, startMs);
    },
    getText,
    close: () => pool.destroy(),
  };
}
