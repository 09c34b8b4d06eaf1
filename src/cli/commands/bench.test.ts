import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { reportError } from '../exit.js';
import type { CliIo } from '../io.js';
import { run } from './bench.js';

// What main() does for a command (its lazy `import(\`./commands/${name}.js\`)` is not resolvable under vite).
async function main(argv: string[], io: CliIo): Promise<number> {
  return run(argv.slice(1), io).catch((e: unknown) => reportError(e, io));
}

interface FakeServer { url: string; close(): Promise<void> }
const FAKE = '../../../test/fakes/sse-server.js';
const { startSseServer } = (await import(/* @vite-ignore */ FAKE)) as { startSseServer: (s: () => object) => Promise<FakeServer> };

function captureIo() {
  const out = new PassThrough();
  const err = new PassThrough();
  const text = { stdout: '', stderr: '' };
  out.on('data', (d) => { text.stdout += d; });
  err.on('data', (d) => { text.stderr += d; });
  return { io: { stdout: out, stderr: err, env: { SPECTUNE_API_KEY: 'sk-secretsecretsecret1234' } }, text };
}

let server: FakeServer | null = null;
afterEach(async () => { await server?.close(); server = null; });

describe('spectune bench', () => {
  it('prints {"runs":[...]} with exactly the promised fields under --json', async () => {
    server = await startSseServer(() => ({ frames: 4, itlMs: 2 }));
    const c = captureIo();
    const code = await main(['bench', '--url', server.url, '--concurrency', '1,2', '--requests', '4', '--output-tokens', '4', '--json'], c.io);
    expect(code).toBe(0);
    const doc = JSON.parse(c.text.stdout) as { runs: Record<string, unknown>[]; transport: string };
    expect(doc.runs).toHaveLength(2);
    expect(doc.transport).toBe('native');
    expect(Object.keys(doc.runs[0])).toEqual(['concurrency', 'requests', 'outputTokensPerSec', 'requestsPerSec', 'ttftMs', 'itlMs', 'e2eMs', 'decodeTokensPerSec', 'acceptLength', 'acceptRate', 'acceptSource', 'errors']);
    expect((doc as { cachePolicy?: string }).cachePolicy).toMatch(/random prefix unique to the run and the request/);
    expect(doc.runs[1]).toMatchObject({ concurrency: 2, requests: { ok: 4, failed: 0 } });
    expect(c.text.stderr).toContain('concurrency 2:');
  });

  it('prints one line per level without --json', async () => {
    server = await startSseServer(() => ({ frames: 3, itlMs: 1 }));
    const c = captureIo();
    expect(await main(['bench', '--url', server.url, '--requests', '2'], c.io)).toBe(0);
    expect(c.text.stdout.trim().split('\n')).toHaveLength(1);
    expect(c.text.stdout).toMatch(/^concurrency 1: 2 ok, 0 failed, .* out tok\/s.*TTFT ms mean/);
  });

  it('explains a refused connection in one line with a hint and never prints the API key', async () => {
    server = await startSseServer(() => ({}));
    const url = server.url;
    await server.close();
    server = null;
    const c = captureIo();
    expect(await main(['bench', '--url', url, '--requests', '1'], c.io)).toBe(1);
    expect(c.text.stderr).toMatch(/^spectune: cannot connect to http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED.*\(hint: is the server up\? check --url\)\n$/);
    expect(c.text.stderr + c.text.stdout).not.toContain('secretsecret');
  });

  it('rejects bad flags as usage errors', async () => {
    const c = captureIo();
    expect(await main(['bench', '--url', 'http://127.0.0.1:1', '--concurrency', '0'], c.io)).toBe(2);
    expect(c.text.stderr).toContain('--concurrency');
    const d = captureIo();
    expect(await main(['bench', '--url', 'http://127.0.0.1:1', '--transport', 'uring'], d.io)).toBe(2);
    expect(d.text.stderr).toMatch(/^spectune: --transport: expected auto, native or js, got "uring"/);
  });

  it('reads with JS sockets under --transport js, with the same figures', async () => {
    server = await startSseServer(() => ({ frames: 6, itlMs: 3 }));
    const c = captureIo();
    expect(await main(['bench', '--url', server.url, '--requests', '3', '--output-tokens', '6', '--transport', 'js', '--json'], c.io)).toBe(0);
    const doc = JSON.parse(c.text.stdout) as { runs: { requests: { ok: number }; itlMs: { mean: number } }[]; transport: string };
    expect(doc.transport).toBe('js');
    expect(doc.runs[0].requests.ok).toBe(3);
    expect(doc.runs[0].itlMs.mean).toBeGreaterThan(2);
  });
});
