// One engine registry: the probes ask only the endpoints the engine's adapter names (a real HTTP server on port 0
// records them), and the config's engine enum is the registry's.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCapacity } from '../../src/app/tune-service.js';
import { targetSchema } from '../../src/config/schema.js';
import { ENGINE_NAMES, getEngine } from '../../src/engines/index.js';
import { createHttpProber, httpProber, readEngineInfo } from '../../src/service/health.js';

const SERVER_INFO = {
  max_total_num_tokens: 4096,
  max_running_requests: 8,
  context_length: 2048,
  internal_states: [{ avg_spec_accept_length: 2.5 }],
};
let server: Server;
let base = '';
let asked: string[] = [];
/** The Authorization header each asked path came with. */
let auth: Record<string, string | undefined> = {};
/** Paths that answer 404 (an SGLang without /server_info). */
let missing = new Set<string>();

beforeAll(async () => {
  server = createServer((req, res) => {
    asked.push(req.url ?? '');
    auth[req.url ?? ''] = req.headers.authorization;
    if (missing.has(req.url ?? '')) {
      res.writeHead(404).end();
      return;
    }
    if (req.url === '/metrics') {
      res
        .writeHead(200, { 'content-type': 'text/plain' })
        .end('sglang:num_running_reqs{tp_rank="0"} 3\nvllm:num_requests_running 2\n');
      return;
    }
    if (req.url === '/server_info' || req.url === '/get_server_info') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(SERVER_INFO));
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

// The paths one probe asked, with a fresh record.
async function record<T>(work: () => Promise<T>, notFound: string[] = []): Promise<{ value: T; paths: string[] }> {
  asked = [];
  auth = {};
  missing = new Set(notFound);
  const value = await work();
  return { value, paths: [...asked].sort() };
}

describe('engine probes follow the adapter', () => {
  it('asks SGLang for /metrics and /server_info, falling back to /get_server_info', async () => {
    const a = await record(() => httpProber.metrics(base, getEngine('sglang')));
    expect(a.paths).toEqual(['/metrics', '/server_info']);
    expect(a.value).toMatchObject({ runningRequests: 3, acceptLength: 2.5, maxRunningRequests: 8 });
    const b = await record(() => readEngineInfo(base, getEngine('sglang')), ['/server_info']);
    expect(b.paths).toEqual(['/get_server_info', '/server_info']);
    expect(b.value).toMatchObject({ max_running_requests: 8 });
  });

  it('never asks vLLM or llama-server for /server_info', async () => {
    for (const name of ['vllm', 'llamacpp'] as const) {
      const a = await record(() => httpProber.metrics(base, getEngine(name)));
      expect(a.paths).toEqual(['/metrics']);
      expect(a.value).not.toBeNull();
    }
    expect((await record(() => httpProber.metrics(base, getEngine('vllm')))).value?.runningRequests).toBe(2);
  });

  it("reads capacity from SGLang's info only; other engines cost no request", async () => {
    const sg = await record(() => readCapacity(base, 'sglang'));
    expect(sg.value).toEqual({ maxTotalNumTokens: 4096, maxRunningRequests: 8, contextLen: 2048 });
    const vl = await record(() => readCapacity(base, 'vllm'));
    expect(vl).toEqual({ value: null, paths: [] });
    expect((await record(() => readCapacity(base, 'sglang'), ['/server_info', '/get_server_info'])).value).toBeNull();
  });
});

describe("probes carry the engine's --api-key", () => {
  it('sends the bearer key on health, metrics and /server_info (SGLang guards /server_info: no 401 in its journal)', async () => {
    const p = createHttpProber('k-123');
    await record(() => p.health(`${base}/health`));
    await record(async () => {
      await p.metrics(base, getEngine('sglang'));
    });
    expect(auth).toEqual({ '/metrics': 'Bearer k-123', '/server_info': 'Bearer k-123' });
    await record(() => readCapacity(base, 'sglang', 'k-123'));
    expect(auth).toEqual({ '/server_info': 'Bearer k-123' });
    // llama-server guards /metrics too.
    await record(async () => {
      await p.metrics(base, getEngine('llamacpp'));
    });
    expect(auth).toEqual({ '/metrics': 'Bearer k-123' });
    await record(() => p.health(`${base}/health`));
    expect(auth).toEqual({ '/health': 'Bearer k-123' });
    // Without a key nothing is sent.
    await record(async () => {
      await createHttpProber(null).metrics(base, getEngine('sglang'));
    });
    expect(auth).toEqual({ '/metrics': undefined, '/server_info': undefined });
  });
});

describe("the config's engine enum", () => {
  it("accepts exactly the registry's engines", () => {
    const target = (engine: string) =>
      targetSchema.safeParse({ engine, endpoint: 'http://127.0.0.1:30000', hosts: [{ unit: 'x.service' }] }).success;
    for (const name of ENGINE_NAMES) expect(target(name)).toBe(true);
    expect(target('tgi')).toBe(false);
  });
});
