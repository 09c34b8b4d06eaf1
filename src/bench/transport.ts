// Transport contract of the benchmark: send one streamed request, GET a text endpoint, close the pool.
// Plain http:// uses the raw-socket transport (cheapest per token); https:// goes through node:https.
import http from 'node:http';
import https from 'node:https';
import type { PlannedRequest } from './api.js';
import type { RequestOutcome, RequestTimeline } from './metrics.js';
import { createNodeTransport } from './node-transport.js';
import { createNativeTransport, loadNativeReader } from './native-transport.js';
import { createRawTransport } from './raw-transport.js';
import { ToolError } from '../errors.js';
import type { SseScanner } from './sse.js';
import type { BenchErrors } from './types.js';

/** The transports: `native` (reader thread, kernel receive stamps), `js` (net.Socket), `node:https` (TLS). */
export type TransportName = 'native' | 'js' | 'node:https';

/** What the caller asks for: the native reader when it is built (auto), or one of them by name. */
export type TransportChoice = 'auto' | 'native' | 'js';

/** Where a request is: connecting, waiting for its first token, or streaming. */
export type StreamPhase = 'connect' | 'first' | 'stream';

/** A request on the wire; the watchdog reads `phase`/`lastActivityMs` and calls `fail` on timeouts. */
export interface InFlight {
  readonly id: string;
  readonly timeline: RequestTimeline;
  readonly scanner: SseScanner;
  phase: StreamPhase;
  lastActivityMs: number;
  fail(phase: keyof BenchErrors, message: string): void;
  readonly done: Promise<RequestOutcome>;
}

/** How requests reach the server. */
export interface Transport {
  /** Which transport this is: the native reader, JS sockets, or node:http(s). */
  readonly name: TransportName;
  // Send one request and stream its answer; `startMs` overrides the start (open loop: the scheduled arrival).
  send(url: URL, plan: PlannedRequest, id: string, now: () => number, expectedFrames: number, startMs: number | null): InFlight;
  // GET a text endpoint (/metrics, /server_info); null when unreachable or not 2xx.
  getText(url: URL, headers: Record<string, string>, timeoutMs: number): Promise<string | null>;
  // Close every pooled connection.
  close(): void;
}

/** Settling logic shared by the transports: one outcome per request, whatever fires first. */
export interface RequestState {
  readonly inflight: InFlight;
  readonly settled: boolean;
  finish(ok: boolean, phase: keyof BenchErrors | null, error: string | null): void;
  // The response ended: ok after [DONE], else the phase that explains why not.
  finishStream(): void;
}

// Create the state of one request; `abort` tears the connection down when the watchdog fails it.
export function createRequestState(id: string, timeline: RequestTimeline, scanner: SseScanner, now: () => number, abort: () => void): RequestState {
  let settle!: (o: RequestOutcome) => void;
  const done = new Promise<RequestOutcome>((r) => { settle = r; });
  let settled = false;
  const finish = (ok: boolean, phase: keyof BenchErrors | null, error: string | null): void => {
    if (settled) return;
    settled = true;
    settle({ id, ok, errorPhase: phase, error, endMs: now(), completionTokens: scanner.completionTokens, promptTokens: scanner.promptTokens });
  };
  const inflight: InFlight = {
    id, timeline, scanner, phase: 'connect', lastActivityMs: timeline.startMs, done,
    fail(phase, message) {
      finish(false, phase, message);
      abort();
    },
  };
  return {
    inflight,
    get settled() { return settled; },
    finish,
    finishStream() {
      if (scanner.errorMessage !== null) finish(false, 'other', `stream error: ${scanner.errorMessage}`);
      else if (!scanner.done) finish(false, 'endedEarly', `stream ended before [DONE] after ${timeline.frames} token frames`);
      else finish(true, null, null);
    },
  };
}

// Pick the transport for a base URL: TLS goes through node:https; plain HTTP uses the native reader when it is
// built (or asked for), else JS sockets.
export function createTransport(base: URL, choice: TransportChoice = 'auto'): Transport {
  const secure = base.protocol === 'https:';
  const agent = secure ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
  const request = secure ? https.request : http.request;
  const getText: Transport['getText'] = (url, headers, timeoutMs) => fetchText(request, agent, url, headers, timeoutMs);
  const streaming = secure ? createNodeTransport(base, getText) : createPlainTransport(base, getText, choice);
  return { ...streaming, close: () => { streaming.close(); agent.destroy(); } };
}

function createPlainTransport(base: URL, getText: Transport['getText'], choice: TransportChoice): Transport {
  if (choice === 'js') return createRawTransport(base, getText);
  if (choice === 'auto' && !loadNativeReader().addon) return createRawTransport(base, getText);
  try {
    return createNativeTransport(base, getText);
  } catch (e) {
    const msg = (e as Error).message;
    if (/getaddrinfo/.test(msg)) throw new ToolError('E_BENCH_FAILED', `cannot resolve ${base.hostname}: ${msg}`, { hint: 'check the host name in --url' });
    throw new ToolError('E_BENCH_FAILED', `native transport unavailable: ${msg}`, { hint: 'run `bash scripts/build-native.sh` (needs a C compiler), or use --transport js' });
  }
}

function fetchText(request: typeof http.request, agent: http.Agent, url: URL, headers: Record<string, string>, timeoutMs: number): Promise<string | null> {
  return new Promise((resolve) => {
    const req = request(url, { method: 'GET', agent, headers, timeout: timeoutMs }, (res) => {
      if ((res.statusCode ?? 0) >= 300) {
        res.resume();
        resolve(null);
        return;
      }
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (s: string) => { text += s; });
      res.on('end', () => resolve(text));
      res.on('error', () => resolve(null));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(null));
    req.end();
  });
}
