// Generation endpoints: turn a request into a scheduler job and stream its token bursts back (SSE or one JSON).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { logAccess, newRequestId, sendJson, type SimContext } from './http.js';
import {
  parseGenSpec,
  planLength,
  renderFinishReason,
  renderFullResponse,
  renderSse,
  renderStreamChunk,
  renderTokens,
  renderUsage,
  type ApiKind,
  type GenSpec,
  type ResponseCtx,
} from './openai.js';

/** Largest request body accepted (bytes); prompts beyond this are a client bug, not a load test. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;

// Read and JSON-parse a request body.
async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error('request body too large');
    chunks.push(c as Buffer);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

// POST /v1/chat/completions, /v1/completions and /generate.
export async function handleGeneration(
  ctx: SimContext,
  kind: ApiKind,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  let body: unknown;
  try {
    body = await readJson(req);
  } catch (e) {
    return sendJson(ctx, req, res, 400, {
      object: 'error',
      message: `Invalid request body: ${(e as Error).message}`,
      type: 'BadRequestError',
      code: 400,
    });
  }
  const parsed = parseGenSpec(kind, body);
  if (!parsed.ok)
    return sendJson(ctx, req, res, 400, { object: 'error', message: parsed.error, type: 'BadRequestError', code: 400 });
  const spec = parsed.spec;
  const rid = spec.rid ?? newRequestId();
  const plan = planLength(spec, rid);
  const rc: ResponseCtx = { id: rid, model: ctx.servedModelName, created: Math.floor(Date.now() / 1000) };
  const startedAt = performance.now();
  const stream = spec.stream ? startStream(ctx, req, res, kind, rc, spec) : null;
  let generated = 0;
  let verify = 0;
  res.on('close', () => {
    if (generated < plan.tokens) ctx.scheduler.abort(rid);
  });
  ctx.scheduler.submit({
    rid,
    promptTokens: spec.promptTokens,
    targetTokens: plan.tokens,
    finishReason: plan.reason,
    internal: req.headers['x-spectune-sim-internal'] === '1',
    onTokens: (count, done) => {
      const text = renderTokens(generated, count);
      generated += count;
      verify++;
      const meta = { rid, generated, verify, done, e2e: (performance.now() - startedAt) / 1000 };
      if (stream) stream(text, done ? plan.reason : null, meta);
      else if (done) sendJson(ctx, req, res, 200, renderFinal(kind, rc, spec, plan.reason, meta));
    },
  });
}

/** Per-request progress passed to the renderers. */
interface Progress {
  rid: string;
  generated: number;
  verify: number;
  done: boolean;
  e2e: number;
}

// The non-streaming response body of each API.
function renderFinal(kind: ApiKind, rc: ResponseCtx, spec: GenSpec, reason: 'length' | 'stop', p: Progress): unknown {
  const text = renderTokens(0, p.generated);
  if (kind !== 'generate') return renderFullResponse(kind, rc, text, reason, spec.promptTokens, p.generated);
  return { text, meta_info: renderMeta(spec, reason, p) };
}

function renderMeta(spec: GenSpec, reason: 'length' | 'stop' | null, p: Progress) {
  return {
    id: p.rid,
    finish_reason: renderFinishReason(reason, p.generated),
    prompt_tokens: spec.promptTokens,
    completion_tokens: p.generated,
    cached_tokens: 0,
    e2e_latency: p.e2e,
  };
}

// Open an SSE response; returns the function that writes one burst (and the tail on the last one).
function startStream(
  ctx: SimContext,
  req: IncomingMessage,
  res: ServerResponse,
  kind: ApiKind,
  rc: ResponseCtx,
  spec: GenSpec,
) {
  logAccess(ctx, req, 200);
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  let first = true;
  let full = '';
  return (text: string, finish: 'length' | 'stop' | null, p: Progress): void => {
    if (res.destroyed) return;
    full += text;
    if (kind === 'generate') {
      res.write(renderSse({ text: full, meta_info: renderMeta(spec, finish, p) }));
    } else {
      res.write(renderSse(renderStreamChunk(kind, rc, text, null, first)));
      if (finish) res.write(renderSse(renderStreamChunk(kind, rc, '', finish, false)));
      if (finish && spec.includeUsage) {
        res.write(
          renderSse({
            id: rc.id,
            object: kind === 'chat' ? 'chat.completion.chunk' : 'text_completion',
            created: rc.created,
            model: rc.model,
            choices: [],
            usage: renderUsage(spec.promptTokens, p.generated),
          }),
        );
      }
    }
    first = false;
    if (finish) res.end('data: [DONE]\n\n');
  };
}
