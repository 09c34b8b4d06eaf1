// The simulator's HTTP front end (node:http): SGLang's routes, status codes, API-key check and access log.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { formatAccess } from './log-format.js';
import type { SimLogger } from './logger.js';
import type { CapacityOk } from './model.js';
import type { SimProfile } from './profile.js';
import type { Scheduler } from './scheduler.js';
import type { SimSettings } from './settings.js';
import { renderMetrics } from './metrics.js';
import { handleGeneration } from './generate.js';
import type { ApiKind } from './openai.js';

/** Lifecycle state the endpoints answer from. */
export type SimStatus = 'starting' | 'ready' | 'draining' | 'hung';

/** Everything a request handler reads. */
export interface SimContext {
  status: SimStatus;
  logger: SimLogger;
  scheduler: Scheduler;
  profile: SimProfile;
  settings: SimSettings;
  capacity: CapacityOk;
  serverArgs: Record<string, unknown>;
  modelPath: string;
  servedModelName: string;
  apiKey: string | null;
  timeScale: number;
  startedAt: number;
  /** A health check timed out (SGLang's ServerStatus.UnHealthy): SIGTERM then exits without draining. */
  unhealthy: boolean;
}

/** SGLang's health-check timeout (SGLANG_HEALTH_CHECK_TIMEOUT default, seconds). */
const HEALTH_CHECK_TIMEOUT_S = 20;
/** Version string reported by the info endpoints; marks the simulator. */
export const SIM_VERSION = '0.5.9-spectune-sim';
const GEN_ROUTES: Record<string, ApiKind> = {
  '/v1/chat/completions': 'chat',
  '/v1/completions': 'completion',
  '/generate': 'generate',
};

// Send a JSON body with a status and write the access-log line.
export function sendJson(
  ctx: SimContext,
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  body: unknown,
): void {
  logAccess(ctx, req, status);
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

// uvicorn's access line for this request.
export function logAccess(ctx: SimContext, req: IncomingMessage, status: number): void {
  const client = `${req.socket.remoteAddress?.replace(/^::ffff:/, '') ?? '127.0.0.1'}:${req.socket.remotePort ?? 0}`;
  ctx.logger.uvicorn(formatAccess(client, req.method ?? 'GET', req.url ?? '/', status));
}

// Route one HTTP request.
export async function handleRequest(ctx: SimContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '/').split('?')[0];
  if (
    ctx.apiKey &&
    !path.startsWith('/health') &&
    !path.startsWith('/metrics') &&
    req.method !== 'OPTIONS' &&
    req.headers.authorization !== `Bearer ${ctx.apiKey}`
  ) {
    return sendJson(ctx, req, res, 401, { error: 'Unauthorized' });
  }
  if (req.method === 'POST' && GEN_ROUTES[path]) return handleGeneration(ctx, GEN_ROUTES[path], req, res);
  if (req.method !== 'GET' && req.method !== 'POST')
    return sendJson(ctx, req, res, 405, { detail: 'Method Not Allowed' });
  switch (path) {
    case '/health':
    case '/health_generate':
      return handleHealth(ctx, req, res);
    case '/get_server_info':
    case '/server_info':
      if (path === '/get_server_info') {
        ctx.logger.main(
          "Endpoint '/get_server_info' is deprecated and will be removed in a future version. Please use '/server_info' instead.",
        );
      }
      return sendJson(ctx, req, res, 200, renderServerInfo(ctx));
    case '/get_model_info':
    case '/model_info':
      return sendJson(ctx, req, res, 200, {
        model_path: ctx.modelPath,
        tokenizer_path: ctx.modelPath,
        is_generation: true,
        preferred_sampling_params: null,
        weight_version: 'default',
        simulated: true,
      });
    case '/v1/models':
      return sendJson(ctx, req, res, 200, {
        object: 'list',
        data: [
          {
            id: ctx.servedModelName,
            object: 'model',
            created: Math.floor(ctx.startedAt / 1000),
            owned_by: 'sglang',
            root: ctx.modelPath,
            max_model_len: ctx.settings.contextLength,
          },
        ],
      });
    case '/metrics':
      return sendMetrics(ctx, req, res);
    case '/ping':
      return sendJson(ctx, req, res, 200, {});
    case '/flush_cache':
      return sendFlushCache(ctx, req, res);
    default:
      return sendJson(ctx, req, res, 404, { detail: 'Not Found' });
  }
}

// /health and /health_generate: 503 while starting or draining; a hung scheduler fails after the health timeout.
async function handleHealth(ctx: SimContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (ctx.status === 'starting') return sendEmpty(ctx, req, res, 503);
  if (ctx.status === 'draining') {
    ctx.logger.main('Health check request received during shutdown. Returning 503.');
    return sendEmpty(ctx, req, res, 503);
  }
  if (ctx.status === 'hung') {
    const tic = Date.now() / 1000;
    await new Promise((r) => setTimeout(r, HEALTH_CHECK_TIMEOUT_S * 1000 * ctx.timeScale));
    ctx.logger.main(
      `Health check failed. Server couldn't get a response from detokenizer for last ${HEALTH_CHECK_TIMEOUT_S} seconds. ` +
        `tic start time: ${tic.toFixed(7)}. last_heartbeat time: ${(ctx.startedAt / 1000).toFixed(7)}`,
    );
    ctx.unhealthy = true;
    return sendEmpty(ctx, req, res, 503);
  }
  return sendEmpty(ctx, req, res, 200);
}

// SGLang's /flush_cache (http_server.py): plain text, 200; the simulator has no prefix cache to empty.
function sendFlushCache(ctx: SimContext, req: IncomingMessage, res: ServerResponse): void {
  logAccess(ctx, req, 200);
  ctx.logger.main('Cache flushed successfully!');
  const text =
    'Cache flushed.\nPlease check backend logs for more details. (When there are running or waiting requests, the operation will not be performed.)\n';
  res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function sendEmpty(ctx: SimContext, req: IncomingMessage, res: ServerResponse, status: number): void {
  logAccess(ctx, req, status);
  res.writeHead(status, { 'content-length': 0 });
  res.end();
}

// /server_info: server args, scheduler info and per-rank internal state, marked as simulated.
function renderServerInfo(ctx: SimContext) {
  const s = ctx.scheduler;
  const avgAccept = s.cumVerifyCt ? s.cumAcceptLen / s.cumVerifyCt : null;
  const internal = {
    ...ctx.serverArgs,
    last_gen_throughput: s.lastGenThroughput,
    ...(ctx.settings.speculative ? { avg_spec_accept_length: avgAccept ?? 0 } : {}),
    memory_usage: {
      weight: ctx.capacity.weightsGb + ctx.capacity.draftWeightsGb,
      kvcache: ctx.capacity.kvCacheGb,
      token_capacity: ctx.capacity.maxTotalNumTokens,
      cuda_graph: ctx.capacity.cudaGraphGb,
    },
    load: s.running.length + s.queue.length,
  };
  return {
    ...ctx.serverArgs,
    max_running_requests: ctx.capacity.maxRunningRequests,
    max_total_num_tokens: ctx.capacity.maxTotalNumTokens,
    max_req_input_len: ctx.settings.contextLength - 1,
    internal_states: [internal],
    version: SIM_VERSION,
    simulated: true,
    sim_profile: ctx.profile.name,
  };
}

function sendMetrics(ctx: SimContext, req: IncomingMessage, res: ServerResponse): void {
  const s = ctx.scheduler;
  const spec = ctx.settings.speculative;
  const text = renderMetrics({
    modelName: ctx.servedModelName,
    running: s.running.length,
    queued: s.queue.length,
    usedTokens: s.usedTokens(),
    maxTotalNumTokens: ctx.capacity.maxTotalNumTokens,
    genThroughput: s.lastGenThroughput,
    specAcceptLength: spec ? s.lastAcceptLen : null,
    specAcceptRate: spec ? s.lastAcceptLen / spec.numDraftTokens : null,
    promptTokensTotal: s.promptTotal,
    generationTokensTotal: s.generatedTotal,
    requestsTotal: s.finished,
  });
  logAccess(ctx, req, 200);
  res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
  res.end(text);
}

// A request id like SGLang's default (uuid hex).
export function newRequestId(): string {
  return randomUUID().replace(/-/g, '');
}
