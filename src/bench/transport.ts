// Transport contract of the benchmark: send one streamed request, GET a text endpoint, close the pool.
// Plain http:// uses the raw-socket transport (cheapest per token); https:// goes through node:https.
import http from 'node:http';
import https from 'node:https';
import { ToolError } from '../errors.js';
import type { PlannedRequest } from './api.js';
import { createNativeTransport, loadNativeReader } from './native-transport.js';
import { createNodeTransport } from './node-transport.js';
import { createRawTransport } from './raw-transport.js';
import type { InFlight } from './request-state.js';

export type { InFlight, StreamPhase } from './request-state.js';

/** The transports: `native` (reader thread, kernel receive stamps), `js` (net.Socket), `node:https` (TLS). */
export type TransportName = 'native' | 'js' | 'node:https';

/** What the caller asks for: the native reader when it is built (auto), or one of them by name. */
export type TransportChoice = 'auto' | 'native' | 'js';

/** How requests reach the server. */
export interface Transport {
  /** Which transport this is: the native reader, JS sockets, or node:http(s). */
  readonly name: TransportName;
  // Send one request and stream its answer; `startMs` overrides the start (open loop: the scheduled arrival).
  send(
    url: URL,
    plan: PlannedRequest,
    id: string,
    now: () => number,
    expectedFrames: number,
    startMs: number | null,
  ): InFlight;
  // GET a text endpoint (/metrics, /server_info); null when unreachable or not 2xx.
  getText(url: URL, headers: Record<string, string>, timeoutMs: number): Promise<string | null>;
  // Close every pooled connection.
  close(): void;
}

// Pick the transport for a base URL: TLS goes through node:https; plain HTTP uses the native reader when it is
// built (or asked for), else JS sockets.
export function createTransport(base: URL, choice: TransportChoice = 'auto'): Transport {
  const secure = base.protocol === 'https:';
  const agent = secure ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
  const request = secure ? https.request : http.request;
  const getText: Transport['getText'] = (url, headers, timeoutMs) => fetchText(request, agent, url, headers, timeoutMs);
  const streaming = secure ? createNodeTransport(base, getText) : createPlainTransport(base, getText, choice);
  return {
    ...streaming,
    close: () => {
      streaming.close();
      agent.destroy();
    },
  };
}

function createPlainTransport(base: URL, getText: Transport['getText'], choice: TransportChoice): Transport {
  if (choice === 'js') return createRawTransport(base, getText);
  if (choice === 'auto' && !loadNativeReader().addon) return createRawTransport(base, getText);
  try {
    return createNativeTransport(base, getText);
  } catch (e) {
    const msg = (e as Error).message;
    if ((e as NodeJS.ErrnoException).code === 'ENOTFOUND')
      throw new ToolError('E_BENCH_FAILED', `cannot resolve ${base.hostname}: ${msg}`, {
        hint: 'check the host name in --url',
      });
    throw new ToolError('E_BENCH_FAILED', `native transport unavailable: ${msg}`, {
      hint: 'run `bash scripts/build-native.sh` (needs a C compiler), or use --transport js',
    });
  }
}

function fetchText(
  request: typeof http.request,
  agent: http.Agent,
  url: URL,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<string | null> {
  return new Promise((resolve) => {
    const req = request(url, { method: 'GET', agent, headers, timeout: timeoutMs }, (res) => {
      if ((res.statusCode ?? 0) >= 300) {
        res.resume();
        resolve(null);
        return;
      }
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (s: string) => {
        text += s;
      });
      res.on('end', () => resolve(text));
      res.on('error', () => resolve(null));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
    req.end();
  });
}
