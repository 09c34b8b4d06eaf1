// Streaming over node:http(s) with a keep-alive agent: used for https:// (TLS), where the raw transport does not go.
import http from 'node:http';
import https from 'node:https';
import { RequestTimeline } from './metrics.js';
import { SseScanner } from './sse.js';
import { createRequestState, type RequestState } from './request-state.js';
import type { Transport } from './transport.js';

// An error body is read only this far: enough for the server's message, bounded memory.
const MAX_ERROR_BODY = 2048;
// Sockets kept open between requests; must cover the highest concurrency so levels reuse their connections.
const MAX_FREE_SOCKETS = 65_536;

// A streaming transport on node:http(s).
export function createNodeTransport(base: URL, getText: Transport['getText']): Transport {
  const secure = base.protocol === 'https:';
  const opts = { keepAlive: true, maxSockets: Infinity, maxFreeSockets: MAX_FREE_SOCKETS, scheduling: 'lifo' as const };
  const agent = secure ? new https.Agent(opts) : new http.Agent(opts);
  const request = secure ? https.request : http.request;
  return {
    name: secure ? 'node:https' : 'js',
    send(url, plan, id, now, expectedFrames, startMs) {
      const timeline = new RequestTimeline(startMs ?? now(), expectedFrames);
      let req: http.ClientRequest | null = null;
      const st = createRequestState(id, timeline, new SseScanner(), now, () => req?.destroy());
      req = request(url, { method: 'POST', agent, headers: plan.headers });
      req.on('error', (e: NodeJS.ErrnoException) => {
        const phase = st.inflight.phase === 'connect' ? 'connect' : 'endedEarly';
        st.finish(false, phase, `${e.code ?? e.name}: ${e.message}`);
      });
      req.on('socket', (sock) => {
        const connected = (): void => {
          if (st.inflight.phase === 'connect') st.inflight.phase = 'first';
        };
        if (sock.connecting) sock.once('connect', connected);
        else connected();
      });
      req.on('response', (res) => onResponse(res, st, now));
      req.end(plan.body);
      return st.inflight;
    },
    getText,
    close: () => agent.destroy(),
  };
}

function onResponse(res: http.IncomingMessage, st: RequestState, now: () => number): void {
  const f = st.inflight;
  f.lastActivityMs = now();
  const status = res.statusCode ?? 0;
  if (status < 200 || status >= 300) {
    readErrorBody(res, (text) => st.finish(false, 'httpStatus', `HTTP ${status}${text ? `: ${text}` : ''}`));
    return;
  }
  res.on('data', (chunk: Buffer) => {
    const n = f.scanner.push(chunk);
    if (n === 0) return;
    const t = now();
    f.timeline.onFrames(n, t);
    f.lastActivityMs = t;
    f.phase = 'stream';
  });
  res.on('end', () => st.finishStream());
  res.on('aborted', () => st.finish(false, 'endedEarly', `connection closed after ${f.timeline.frames} token frames`));
  res.on('error', (e) =>
    st.finish(false, 'endedEarly', `connection closed after ${f.timeline.frames} token frames: ${e.message}`),
  );
}

function readErrorBody(res: http.IncomingMessage, cb: (text: string) => void): void {
  let text = '';
  res.setEncoding('utf8');
  res.on('data', (s: string) => {
    if (text.length < MAX_ERROR_BODY) text += s;
  });
  const end = (): void => cb(text.slice(0, MAX_ERROR_BODY).replace(/\s+/g, ' ').trim());
  res.on('end', end);
  res.on('error', end);
  res.on('aborted', end);
}
