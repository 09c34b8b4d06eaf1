// Scripted OpenAI-compatible SSE server on a real loopback port: exact token schedules, HTTP errors, streams
// that end early, stalls, frames split at every byte. Tests import it dynamically (it sits outside src/).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** How the server answers one request. */
export interface SseScript {
  /** Non-2xx status to answer with instead of streaming. */
  status?: number;
  /** Delay before the first token frame. */
  ttftMs?: number;
  /** Delay between token frames. */
  itlMs?: number;
  /** Token frames to send. */
  frames?: number;
  /** Frames written together in one write (a server flushing several decode steps at once). */
  framesPerWrite?: number;
  /** Tokens each frame stands for (speculative decoding streams several per step). */
  tokensPerFrame?: number;
  /** Send the usage chunk (stream_options.include_usage). */
  usage?: boolean;
  /** Destroy the socket after this many frames. */
  endAfterFrames?: number;
  /** End the response cleanly after this many frames, without [DONE]. */
  finishWithoutDoneAfter?: number;
  /** Stop sending (keep the connection open) after this many frames. */
  stallAfterFrames?: number;
  /** Write every byte as its own write (and flush), to split frames at every offset. */
  byteByByte?: boolean;
  /** Stream an error frame instead of tokens. */
  errorFrame?: boolean;
}

/** A request as the server received it. */
export interface ReceivedRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/** A running fake server. */
export interface SseServer {
  url: string;
  received: ReceivedRequest[];
  /** Raw Prometheus text served at /metrics (null: 404). */
  metrics: string | null;
  serverInfo: unknown;
  close(): Promise<void>;
}

function chatFrame(path: string, text: string): string {
  if (path.endsWith('/chat/completions'))
    return JSON.stringify({
      id: 'x',
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta: { content: text }, finish_reason: null }],
    });
  if (path.endsWith('/completions'))
    return JSON.stringify({ id: 'x', object: 'text_completion', choices: [{ index: 0, text, finish_reason: null }] });
  return JSON.stringify({ text, meta_info: { id: 'x', completion_tokens: 0 } });
}

function usageFrame(prompt: number, completion: number): string {
  return JSON.stringify({
    id: 'x',
    choices: [],
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
  });
}

// Start the server; `script` decides per request (n counts from 0).
export async function startSseServer(script: (req: ReceivedRequest, n: number) => SseScript): Promise<SseServer> {
  const received: ReceivedRequest[] = [];
  const state = { metrics: null as string | null, serverInfo: null as unknown };
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, fn: () => void): void => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (d: Buffer) => {
      raw += d.toString();
    });
    req.on('end', () => {
      const path = req.url ?? '/';
      if (req.method === 'GET') return serveGet(path, res, state);
      const rec: ReceivedRequest = {
        path,
        headers: req.headers,
        body: raw ? (JSON.parse(raw) as Record<string, unknown>) : {},
      };
      received.push(rec);
      play(script(rec, received.length - 1), rec, res, later);
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  const api: SseServer = {
    url: `http://127.0.0.1:${port}`,
    received,
    get metrics() {
      return state.metrics;
    },
    set metrics(v) {
      state.metrics = v;
    },
    get serverInfo() {
      return state.serverInfo;
    },
    set serverInfo(v) {
      state.serverInfo = v;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const t of timers) clearTimeout(t);
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  return api;
}

function serveGet(
  path: string,
  res: http.ServerResponse,
  state: { metrics: string | null; serverInfo: unknown },
): void {
  if (path === '/metrics' && state.metrics !== null) return void res.end(state.metrics);
  if (path === '/server_info' && state.serverInfo !== null) return void res.end(JSON.stringify(state.serverInfo));
  if (path === '/v1/models')
    return void res.end(JSON.stringify({ object: 'list', data: [{ id: 'fake/model-7b', object: 'model' }] }));
  res.statusCode = 404;
  res.end('not found');
}

function play(
  s: SseScript,
  rec: ReceivedRequest,
  res: http.ServerResponse,
  later: (ms: number, fn: () => void) => void,
): void {
  if (s.status) {
    res.statusCode = s.status;
    res.end(JSON.stringify({ error: { message: `scripted ${s.status}` } }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
  const write = (text: string): void => {
    if (!s.byteByByte) return void res.write(text);
    for (const ch of Buffer.from(text)) res.write(Buffer.from([ch]));
  };
  const frames = s.frames ?? 8;
  const per = s.tokensPerFrame ?? 1;
  let sent = 0;
  const step = (): void => {
    if (res.destroyed) return;
    if (s.errorFrame) {
      write(`data: ${JSON.stringify({ error: { message: 'scripted failure' } })}\n\n`);
      return void res.end();
    }
    if (sent === s.endAfterFrames) return void res.destroy();
    if (sent === s.finishWithoutDoneAfter) return void res.end();
    if (sent === s.stallAfterFrames) return;
    if (sent === frames) {
      if (s.usage !== false) write(`data: ${usageFrame(7, frames * per)}\n\n`);
      write('data: [DONE]\n\n');
      return void res.end();
    }
    let text = '';
    for (let k = 0; k < (s.framesPerWrite ?? 1) && sent < frames; k++)
      text += `data: ${chatFrame(rec.path, `tok${sent++} `)}\n\n`;
    write(text);
    later(s.itlMs ?? 5, step);
  };
  write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { role: 'assistant', content: '' } }] })}\n\n`);
  later(s.ttftMs ?? 5, step);
}
