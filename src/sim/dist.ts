// Multi-node mode: rank 0 listens on --dist-init-addr, other ranks connect; a lost peer is reported once (real TCP).
import { createServer, connect, type Server, type Socket } from 'node:net';

/** How often a non-zero rank retries reaching rank 0 (ms, before time scaling). */
const CONNECT_RETRY_MS = 1000;

/** A joined process group. */
export interface DistGroup {
  close(): void;
}

// Split `host:port`.
export function parseDistAddr(addr: string): { host: string; port: number } | null {
  const m = /^\[?([^\]]*)\]?:(\d+)$/.exec(addr);
  return m ? { host: m[1], port: Number(m[2]) } : null;
}

// Rank 0: listen and wait until `peers` other nodes connected; `onPeerLost` fires when one disconnects.
export function hostDistGroup(host: string, port: number, peers: number, onPeerLost: () => void): Promise<DistGroup> {
  return new Promise((resolve, reject) => {
    const sockets: Socket[] = [];
    let closed = false;
    const server: Server = createServer((sock) => {
      sockets.push(sock);
      sock.on('error', () => undefined);
      sock.on('close', () => !closed && onPeerLost());
      if (sockets.length === peers) resolve({ close: () => { closed = true; closeAll(server, sockets); } });
    });
    server.once('error', reject);
    server.listen(port, host);
  });
}

// Rank > 0: connect to rank 0, retrying until it listens; `onPeerLost` fires when the connection drops.
export function joinDistGroup(host: string, port: number, retryScale: number, onPeerLost: () => void): Promise<DistGroup> {
  return new Promise((resolve) => {
    let closed = false;
    const attempt = () => {
      let connected = false;
      const sock = connect(port, host);
      sock.once('connect', () => {
        connected = true;
        sock.on('close', () => !closed && onPeerLost());
        resolve({ close: () => { closed = true; sock.destroy(); } });
      });
      sock.on('error', () => {
        if (connected || closed) return;
        sock.destroy();
        setTimeout(attempt, CONNECT_RETRY_MS * retryScale);
      });
    };
    attempt();
  });
}

function closeAll(server: Server, sockets: Socket[]): void {
  for (const s of sockets) s.destroy();
  server.close();
}
