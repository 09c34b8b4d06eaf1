// Transport: one streamed HTTP request over node:http with a keep-alive agent; bytes go straight to the SSE
// scanner and the timeline gets one clock read per network read that carried tokens.
import http from 'node:http';
import https from 'node:https';
import type { PlannedRequest } from './api.js';
import { RequestTimeline, type RequestOutcome } from './metrics.js';
import { SseScanner } from './sse.js';
import type { BenchErrors } from './types.js';

// An error body is read only this far: enough for the server's message, bounded memory.
const MAX_ERROR_BODY = 2048;
// Sockets kept open between requests; must cover the highest concurrency so levels reuse their connections.
const MAX_FREE_SOCKETS = 65_536;

/** Connection pool and target of one benchmark. */
export interface Transport {
  base: URL;
  agent: http.Agent;
  request: typeof http.request;
}

// Open a keep-alive pool for a base URL (http or https).
export function createTransport(base: URL): Transport {
  const secure = base.protocol === 'https:';
  const opts = { keepAlive: true, maxSockets: Infinity, maxFreeSockets: MAX_FREE_SOCKETS, scheduling: 'fifo' as const };
  const agent = secure ? new https.Agent(opts) : new http.Agent(opts);
  return { base, agent, request: secure ? https.request : http.request };
}

/** Where a request is: waiting for headers, for its first token, or streaming. */
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

// Send one request and stream its answer; the promise always resolves (failures are outcomes, not exceptions).
// `startMs` overrides the start (open loop: the scheduled arrival, so client-side queueing counts as latency).
export function sendStreaming(t: Transport, url: URL, plan: PlannedRequest, id: string, now: () => number, expectedFrames: number, startMs: number | null = null): InFlight {
  const timeline = new RequestTimeline(startMs ?? now(), expectedFrames);
  const scanner = new SseScanner();
  let settle!: (o: RequestOutcome) => void;
  const done = new Promise<RequestOutcome>((r) => { settle = r; });
  let settled = false;
  const finish = (ok: boolean, phase: keyof BenchErrors | null, error: string | null): void => {
    if (settled) return;
    settled = true;
    settle({ id, ok, errorPhase: phase, error, endMs: now(), completionTokens: scanner.completionTokens, promptTokens: scanner.promptTokens });
  };
  const req = t.request(url, { method: 'POST', agent: t.agent, headers: plan.headers });
  const inflight: InFlight = {
    id, timeline, scanner, phase: 'connect', lastActivityMs: timeline.startMs, done,
    fail(phase, message) {
      finish(false, phase, message);
      req.destroy();
    },
  };
  req.on('error', (e: NodeJS.ErrnoException) => {
    const phase = inflight.phase === 'connect' ? 'connect' : 'endedEarly';
    finish(false, phase, `${e.code ?? e.name}: ${e.message}`);
  });
  req.on('socket', (sock) => {
    const connected = (): void => { if (inflight.phase === 'connect') inflight.phase = 'first'; };
    if (sock.connecting) sock.once('connect', connected);
    else connected();
  });
  req.on('response', (res) => onResponse(res, inflight, now, finish));
  req.end(plan.body);
  return inflight;
}

function onResponse(res: http.IncomingMessage, f: InFlight, now: () => number, finish: (ok: boolean, p: keyof BenchErrors | null, e: string | null) => void): void {
  f.lastActivityMs = now();
  const status = res.statusCode ?? 0;
  if (status < 200 || status >= 300) {
    readErrorBody(res, (text) => finish(false, 'httpStatus', `HTTP ${status}${text ? `: ${text}` : ''}`));
    return;
  }
  const { scanner, timeline } = f;
  res.on('data', (chunk: Buffer) => {
    const n = scanner.push(chunk);
    if (n === 0) return;
    const t = now();
    timeline.onFrames(n, t);
    f.lastActivityMs = t;
    f.phase = 'stream';
  });
  res.on('end', () => {
    if (scanner.errorMessage !== null) finish(false, 'other', `stream error: ${scanner.errorMessage}`);
    else if (!scanner.done) finish(false, 'endedEarly', `stream ended before [DONE] after ${timeline.frames} token frames`);
    else finish(true, null, null);
  });
  res.on('aborted', () => finish(false, 'endedEarly', `connection closed after ${timeline.frames} token frames`));
  res.on('error', (e) => finish(false, 'endedEarly', `connection closed after ${timeline.frames} token frames: ${e.message}`));
}

function readErrorBody(res: http.IncomingMessage, cb: (text: string) => void): void {
  let text = '';
  res.setEncoding('utf8');
  res.on('data', (s: string) => { if (text.length < MAX_ERROR_BODY) text += s; });
  const end = (): void => cb(text.slice(0, MAX_ERROR_BODY).replace(/\s+/g, ' ').trim());
  res.on('end', end);
  res.on('error', end);
  res.on('aborted', end);
}

// Plain GET used for /metrics and /server_info scrapes; null when unreachable or not 2xx.
export function fetchText(t: Transport, url: URL, headers: Record<string, string>, timeoutMs: number): Promise<string | null> {
  return new Promise((resolve) => {
    const req = t.request(url, { method: 'GET', agent: t.agent, headers, timeout: timeoutMs }, (res) => {
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
