// llama-server's acceptance reaches the benchmark from its own stream: a real recorded response (test/fixtures/
// llamacpp-sse) scanned at every split point, and a real server answered through runBench.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseTimingLines } from '../engines/index.js';
import { getEngine } from '../engines/index.js';
import { runBench } from './index.js';
import { computeAcceptance } from './prometheus.js';
import { SseScanner } from './sse.js';

const DIR = join(import.meta.dirname, '../../test/fixtures/llamacpp-sse');
const STREAM = readFileSync(join(DIR, 'completion-draft-stream.txt'));

describe('a recorded llama-server stream (speculative decoding, 12 tokens)', () => {
  it('carries draft_n, draft_n_accepted and predicted_n in the final chunk, found at every split point', () => {
    for (let cut = 0; cut <= STREAM.length; cut += 7) {
      const s = new SseScanner();
      s.push(STREAM.subarray(0, cut));
      s.push(STREAM.subarray(cut));
      expect([s.draftTokens, s.draftAccepted, s.predictedTokens, s.completionTokens, s.done]).toEqual([
        8,
        8,
        12,
        12,
        true,
      ]);
    }
  });

  it('gives the same acceptance rate as the server log, and tokens per target step', () => {
    const log = parseTimingLines(readFileSync(join(DIR, 'server-timing.log'), 'utf8'));
    const a = computeAcceptance(null, null, null, { requests: 1, drafted: 8, accepted: 8, predicted: 12 });
    expect(a.acceptRate).toBe(log.acceptRate);
    expect(log.meanLen).toBe(5);
    // 11 decoded tokens from 3 target steps; the server's mean len (5.00) counts only the 2 steps that verified a
    // draft: near the end of a short request the remaining budget leaves no room for one.
    expect(a.acceptLength).toBeCloseTo(11 / 3, 9);
    expect(a.source).toBe('stream');
  });
});

let server: http.Server | null = null;
afterEach(async () => {
  await new Promise((r) => (server ? server.close(r) : r(null)));
  server = null;
});

describe('runBench against a server that replays the recorded stream', () => {
  it('reports acceptRate and acceptLength from the streams, sends cache_prompt=false, and states the policy', async () => {
    const bodies: Record<string, unknown>[] = [];
    server = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (d) => {
        raw += d;
      });
      req.on('end', () => {
        if (req.url === '/v1/models') return void res.end('{"data":[{"id":"target-8L.gguf"}]}');
        if (req.method !== 'POST') {
          res.statusCode = 404;
          return void res.end();
        }
        bodies.push(JSON.parse(raw) as Record<string, unknown>);
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(STREAM);
      });
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const out = await runBench({
      url,
      api: 'completions',
      requests: 3,
      warmup: 0,
      outputTokens: 12,
      cachePolicy: getEngine('llamacpp').cachePolicy,
    });
    const run = out.runs[0];
    expect(run.acceptRate).toBe(1);
    expect(run.acceptLength).toBeCloseTo(11 / 3, 3);
    expect(run.acceptSource).toBe('stream');
    expect(bodies.every((b) => b.cache_prompt === false)).toBe(true);
    expect(out.cachePolicy).toMatch(/cache_prompt=false/);
  });
});
