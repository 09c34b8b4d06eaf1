// Plain-HTTP transport on spectune's native stream reader (native/stream-reader.c): a dedicated thread reads every
// socket and stamps each read with the kernel's receive time; JavaScript parses the bytes in batches. The
// measured times no longer depend on when the event loop gets to a socket, and a read costs no JS callback.
import { createRequire } from 'node:module';
import { constants } from 'node:os';
import { getSystemErrorName } from 'node:util';
import { KeepAlivePool, PooledConn, hostAndPort, sendOnPool } from './stream-request.js';
import type { Transport } from './transport.js';

// Record layout written by the reader thread (see stream-reader.c).
const HDR = 24;
const EV_DATA = 1;
const EV_CONNECTED = 2;
const EV_CLOSED = 3;
const EPIPE = constants.errno.EPIPE;

/** The addon's functions. */
interface ReaderAddon {
  create(onBatch: (batch: Buffer) => void): unknown;
  resolve(r: unknown, host: string, port: string): void;
  open(r: unknown): number;
  write(r: unknown, id: number, data: Buffer): number;
  close(r: unknown, id: number): void;
  ref(r: unknown, on: boolean): void;
  destroy(r: unknown): ReaderStats;
  monotonicMs(): number;
}

/** What a reader thread did: reads stamped by the kernel or by its clock, and its own CPU time. */
export interface ReaderStats {
  kernelStamps: number;
  clockStamps: number;
  threadCpuMs: number;
  /** How the reader thread was scheduled: SCHED_FIFO 1, nice -20, or as the process was started. */
  priority?: 'fifo' | 'nice-20' | 'default';
}

/** Totals over every reader closed in this process (the accuracy benchmark reads them). */
export const readerTotals: ReaderStats = { kernelStamps: 0, clockStamps: 0, threadCpuMs: 0 };

let loaded: { addon: ReaderAddon | null; why: string } | null = null;

// Load the built addon once; `why` says what is missing when it is not there.
export function loadNativeReader(): { addon: ReaderAddon | null; why: string } {
  if (loaded) return loaded;
  try {
    const req = createRequire(import.meta.url);
    loaded = { addon: req('../../native/build/stream_reader.node') as ReaderAddon, why: '' };
  } catch (e) {
    const why =
      process.platform !== 'linux'
        ? 'the native reader is Linux-only'
        : 'native/build/stream_reader.node is not built (run: bash scripts/build-native.sh)';
    loaded = { addon: null, why: `${why}; ${(e as Error).message.split('\n')[0]}` };
  }
  return loaded;
}

/** The reader thread of one transport and the connections it serves. */
class NativeReader {
  readonly handle: unknown;
  readonly conns = new Map<number, NativeConn>();
  private offsetMs: number | null = null;
  private active = 0;

  constructor(
    readonly addon: ReaderAddon,
    host: string,
    port: number,
  ) {
    this.handle = addon.create((b) => this.onBatch(b));
    addon.ref(this.handle, false);
    try {
      addon.resolve(this.handle, host, String(port));
    } catch (e) {
      addon.destroy(this.handle);
      throw e;
    }
  }

  // Map the reader's CLOCK_MONOTONIC onto the benchmark's clock (performance.now() is the same clock, shifted).
  syncClock(now: () => number): void {
    if (this.offsetMs === null) this.offsetMs = now() - this.addon.monotonicMs();
  }

  // Keep the process alive exactly while requests are in flight.
  track(done: Promise<unknown>): void {
    if (this.active++ === 0) this.addon.ref(this.handle, true);
    void done.then(() => {
      if (--this.active === 0) this.addon.ref(this.handle, false);
    });
  }

  private onBatch(b: Buffer): void {
    const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
    const offset = this.offsetMs ?? 0;
    let p = 0;
    while (p + HDR <= b.length) {
      const id = dv.getUint32(p, true);
      const kind = dv.getUint32(p + 4, true);
      const len = dv.getUint32(p + 8, true);
      const t = dv.getFloat64(p + 16, true) + offset;
      const c = this.conns.get(id);
      p += HDR;
      if (kind === EV_DATA) {
        c?.onData(b, p, len, t);
        p += (len + 7) & ~7;
      } else if (kind === EV_CONNECTED) {
        c?.onOpen();
      } else if (kind === EV_CLOSED) {
        c?.onGone(len);
      }
    }
  }
}

/** One connection owned by the reader thread. */
class NativeConn extends PooledConn {
  private readonly id: number;
  private readMs = 0;

  constructor(
    pool: KeepAlivePool<PooledConn>,
    private readonly reader: NativeReader,
    private readonly where: string,
  ) {
    super(pool);
    let id = -1;
    try {
      id = reader.addon.open(reader.handle);
    } catch (e) {
      const msg = (e as Error).message;
      setImmediate(() => this.onClosed(msg));
    }
    this.id = id;
    if (id >= 0) reader.conns.set(id, this);
  }

  write(wire: string): void {
    if (this.id < 0) return;
    const err = this.reader.addon.write(this.reader.handle, this.id, Buffer.from(wire, 'utf8'));
    // EPIPE: the reader thread has already seen the close, and its record is on the way.
    if (err !== 0 && err !== EPIPE) this.end(`${errnoName(err)}: write to ${this.where} failed`);
  }

  destroy(): void {
    this.end(null);
  }

  stamp(): number {
    return this.readMs;
  }

  onData(b: Buffer, start: number, len: number, t: number): void {
    this.readMs = t;
    this.onBytes(b, start + len, start);
  }

  onOpen(): void {
    this.onConnected();
  }

  onGone(errno: number): void {
    this.reader.conns.delete(this.id);
    this.onClosed(
      errno === 0 ? null : `${errnoName(errno)}: ${this.connected ? 'read from' : 'connect to'} ${this.where} failed`,
    );
  }

  // Close from this side: the thread drops the socket; the close is reported like a socket 'close' event.
  private end(error: string | null): void {
    if (!this.reader.conns.delete(this.id)) return;
    this.reader.addon.close(this.reader.handle, this.id);
    setImmediate(() => this.onClosed(error));
  }
}

function errnoName(errno: number): string {
  try {
    return getSystemErrorName(-errno);
  } catch {
    return `errno ${errno}`;
  }
}

// A transport for http:// URLs on the native reader; throws when the addon is missing or the host unknown.
export function createNativeTransport(base: URL, getText: Transport['getText']): Transport {
  const { addon, why } = loadNativeReader();
  if (!addon) throw new Error(why);
  const { host, port } = hostAndPort(base);
  const reader = new NativeReader(addon, host, port);
  const pool = new KeepAlivePool<PooledConn>((p) => new NativeConn(p, reader, `${host}:${port}`));
  let closed = false;
  return {
    name: 'native',
    send(url, plan, id, now, expectedFrames, startMs) {
      reader.syncClock(now);
      const f = sendOnPool(pool, url, plan, id, now, expectedFrames, startMs);
      reader.track(f.done);
      return f;
    },
    getText,
    close() {
      if (closed) return;
      closed = true;
      pool.destroy();
      const st = addon.destroy(reader.handle);
      readerTotals.kernelStamps += st.kernelStamps;
      readerTotals.clockStamps += st.clockStamps;
      readerTotals.threadCpuMs += st.threadCpuMs;
      readerTotals.priority = st.priority;
    },
  };
}
