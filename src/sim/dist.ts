// Multi-node mode: rank 0 listens on --dist-init-addr, other ranks connect; a lost peer is reported once (real TCP).
import { createServer, connect, type Socket } from 'node:net';

/** How often a non-zero rank retries reaching rank 0 (ms, before time scaling). */
const CONNECT_RETRY_MS = 1000;

// Split `host:port` (IPv6 hosts in brackets).
export function parseDistAddr(addr: string): { host: string; port: number } | null {
  const m = /^\[?([^\]]*)\]?:(\d+)$/.exec(addr);
  return m ? { host: m[1], port: Number(m[2]) } : null;
}

// Rank 0: listen and resolve once `peers` other nodes connected; `onPeerLost` fires when one disconnects.
// Everything is torn down when `signal` aborts.
export function hostDistGroup(
  host: string,
  port: number,
  peers: number,
  onPeerLost: () => void,
  signal: AbortSignal,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const sockets: Socket[] = [];
    const server = createServer((sock) => {
      sockets.push(sock);
      sock.on('error', () => undefined);
      sock.on('close', () => !signal.aborted && onPeerLost());
      if (sockets.length === peers) resolve();
    });
    signal.addEventListener(
      'abort',
      () => {
        for (const s of sockets) s.destroy();
        server.close();
      },
      { once: true },
    );
    server.once('error', reject);
    server.listen(port, host);
  });
}

// Rank > 0: connect to rank 0, retrying until it listens; `onPeerLost` fires when the connection drops.
export function joinDistGroup(
  host: string,
  port: number,
  retryScale: number,
  onPeerLost: () => void,
  signal: AbortSignal,
): Promise<void> {
  return new Promise((resolve) => {
    const attempt = () => {
      if (signal.aborted) return;
      let connected = false;
      const sock = connect(port, host);
      signal.addEventListener('abort', () => sock.destroy(), { once: true });
      sock.once('connect', () => {
        connected = true;
        sock.on('close', () => !signal.aborted && onPeerLost());
        resolve();
      });
      sock.on('error', () => {
        if (connected || signal.aborted) return;
        sock.destroy();
        setTimeout(attempt, CONNECT_RETRY_MS * retryScale);
      });
    };
    attempt();
  });
}
