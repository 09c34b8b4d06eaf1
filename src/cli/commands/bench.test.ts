import { afterEach, describe, expect, it } from 'vitest';
import { reportError } from '../exit.js';
import { captureIo as captureCliIo, type CliIo } from '../io.js';
import { run } from './bench.js';

// What main() does for a command (its lazy `import(\`./commands/${name}.js\`)` is not resolvable under vite).
async function main(argv: string[], io: CliIo): Promise<number> {
  return run(argv.slice(1), io).catch((e: unknown) => reportError(e, io));
}

interface FakeServer {
  url: string;
  close(): Promise<void>;
}
const FAKE = '../../../test/fakes/sse-server.js';
const { startSseServer } = (await import(/* @vite-ignore */ FAKE)) as {
  startSseServer: (s: (req: unknown, n: number) => object) => Promise<FakeServer>;
};

const captureIo = () => captureCliIo({ SPECTUNE_API_KEY: 'sk-secretsecretsecret1234' });

let server: FakeServer | null = null;
afterEach(async () => {
  await server?.close();
  server = null;
});

describe('spectune bench', () => {
  it('refuses token lengths past 2^20 with a usage error (fuzz: --output-tokens=8.456300469223604e+216 was an internal error)', async () => {
    for (const flag of ['--output-tokens=8.456300469223604e+216', '--input-tokens=1048577']) {
      const c = captureIo();
      expect(await main(['bench', '--url', 'http://127.0.0.1:9', flag], c.io), flag).toBe(2);
      expect(c.text.stderr, flag).toMatch(/^spectune: --(output|input)-tokens: at most 1048576, got /);
    }
  });
  it('refuses timeouts a timer cannot hold (fuzz: --first-token-timeout=-688363571 was an internal error)', async () => {
    for (const flag of ['--first-token-timeout=-688363571', '--connect-timeout=0', '--stall-timeout=1e12']) {
      const c = captureIo();
      expect(await main(['bench', '--url', 'http://127.0.0.1:9', flag], c.io), flag).toBe(2);
      expect(c.text.stderr, flag).toMatch(
        /^spectune: --(first-token|connect|stall)-timeout: expected seconds between 0.001 and 2147483, got /,
      );
    }
  });
  it('refuses an API key a header cannot carry with a one-line usage error that does not show it (fuzz: "▞ﳐ🬰" crashed in setHeader)', async () => {
    for (const key of ['▞ﳐ🬰𛄀ꝓ᰾', 'sk-abc def', 'sk-abc\r\nX-Injected: 1', '']) {
      const c = captureIo();
      const code = await main(['bench', '--url', 'http://127.0.0.1:9', `--api-key=${key}`], c.io);
      if (key === '') {
        expect(code).not.toBe(70);
        continue;
      }
      expect(code, key).toBe(2);
      expect(c.text.stderr.trim().split('\n'), key).toHaveLength(1);
      expect(c.text.stderr).toContain('the API key has characters an HTTP header cannot carry');
      expect(c.text.stderr).not.toContain(key);
    }
  });

  it('prints {"runs":[...]} with exactly the promised fields under --json', async () => {
    server = await startSseServer(() => ({ frames: 4, itlMs: 2 }));
    const c = captureIo();
    const code = await main(
      ['bench', '--url', server.url, '--concurrency', '1,2', '--requests', '4', '--output-tokens', '4', '--json'],
      c.io,
    );
    expect(code).toBe(0);
    const doc = JSON.parse(c.text.stdout) as { runs: Record<string, unknown>[]; transport: string };
    expect(doc.runs).toHaveLength(2);
    expect(doc.transport).toBe('native');
    expect(Object.keys(doc.runs[0])).toEqual([
      'concurrency',
      'requests',
      'outputTokensPerSec',
      'requestsPerSec',
      'ttftMs',
      'itlMs',
      'e2eMs',
      'decodeTokensPerSec',
      'acceptLength',
      'acceptRate',
      'acceptSource',
      'errors',
      'sharedReadFrames',
      'engine',
      'stoppedEarly',
    ]);
    expect(doc.runs[0]).toMatchObject({
      sharedReadFrames: expect.any(Number),
      engine: expect.objectContaining({ before: null, after: null }),
    });
    expect(doc).toMatchObject({ skipped: [] });
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
    expect(c.text.stderr).toMatch(
      /^spectune: cannot connect to http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED.*\(hint: is the server up\? check --url\)\n$/,
    );
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
    expect(
      await main(
        ['bench', '--url', server.url, '--requests', '3', '--output-tokens', '6', '--transport', 'js', '--json'],
        c.io,
      ),
    ).toBe(0);
    const doc = JSON.parse(c.text.stdout) as {
      runs: { requests: { ok: number }; itlMs: { mean: number } }[];
      transport: string;
    };
    expect(doc.transport).toBe('js');
    expect(doc.runs[0].requests.ok).toBe(3);
    expect(doc.runs[0].itlMs.mean).toBeGreaterThan(2);
  });

  it('ends a request whose server sent headers then hung after --first-token-timeout, printing progress while it waits (piped)', async () => {
    server = await startSseServer(() => ({ ttftMs: 60_000, frames: 1 }));
    const url = server.url.replace('http://', 'http://operator:hunter2secret@');
    const c = captureIo();
    const t0 = Date.now();
    const code = await main(
      ['bench', '--url', url, '--first-token-timeout', '2', '--warmup', '0', '--requests', '1'],
      c.io,
    );
    const ms = Date.now() - t0;
    expect(code).toBe(1);
    expect(ms).toBeLessThan(6000);
    expect(c.text.stderr).toMatch(
      /^spectune: c=1 \[\.+\] 0\/1 .*1 in flight, waiting 1\.\d s for a first token \(timeout 2 s\)$/m,
    );
    expect(c.text.stderr).toMatch(/no token after 2000 ms/);
    expect(c.text.stderr + c.text.stdout).not.toContain('hunter2secret');
    expect(c.text.stderr).toContain('operator:***@');
  });

  it('a server that hangs on every endpoint (models, metrics, streams) is given up on within a few first-token timeouts, not one per endpoint', async () => {
    const http = await import('node:http');
    const hung = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
    });
    await new Promise<void>((r) => hung.listen(0, '127.0.0.1', () => r()));
    const port = (hung.address() as { port: number }).port;
    try {
      const c = captureIo();
      const t0 = Date.now();
      expect(
        await main(
          [
            'bench',
            '--url',
            `http://127.0.0.1:${port}`,
            '--first-token-timeout',
            '2',
            '--warmup',
            '0',
            '--requests',
            '1',
          ],
          c.io,
        ),
      ).toBe(1);
      // /v1/models (2 s), the engine scrape before the level (2 s, its endpoints at once), the request (2 s).
      expect(Date.now() - t0).toBeLessThan(9000);
      expect(c.text.stderr).toMatch(/no token after 2000 ms/);
      expect(c.text.stderr).toMatch(/waiting 1\.\d s for a first token/);
    } finally {
      hung.closeAllConnections();
      await new Promise((r) => hung.close(r));
    }
  }, 20_000);

  it('reports levels the saturation guard skipped (stderr and --json), and runs them all with --no-saturation-guard', async () => {
    // Requests after the first level stream 100x slower: 4 streams give less than 1 did, as a saturated batch would.
    server = await startSseServer((_r, n) => ({ frames: 6, itlMs: n < 4 ? 1 : 100, ttftMs: 1 }));
    const c = captureIo();
    expect(
      await main(
        ['bench', '--url', server.url, '--concurrency', '1,4,16', '--requests', '4', '--warmup', '0', '--json'],
        c.io,
      ),
    ).toBe(0);
    const doc = JSON.parse(c.text.stdout) as {
      runs: { concurrency: number }[];
      skipped: { concurrency: number; reason: string }[];
    };
    expect(doc.runs.map((r) => r.concurrency)).toEqual([1, 4]);
    expect(doc.skipped).toEqual([
      { concurrency: 16, reason: expect.stringMatching(/^server saturated: concurrency 4 gave/) },
    ]);
    expect(c.text.stderr).toMatch(
      /^spectune: warn: skipped concurrency 16 of the levels asked for \(server saturated: .*\); pass --no-saturation-guard to run every level$/m,
    );
    await server.close();
    server = await startSseServer((_r, n) => ({ frames: 6, itlMs: n < 4 ? 1 : 100, ttftMs: 1 }));
    const d = captureIo();
    expect(
      await main(
        [
          'bench',
          '--url',
          server.url,
          '--concurrency',
          '1,4,16',
          '--requests',
          '4',
          '--warmup',
          '0',
          '--json',
          '--no-saturation-guard',
        ],
        d.io,
      ),
    ).toBe(0);
    const all = JSON.parse(d.text.stdout) as { runs: { concurrency: number }[]; skipped: unknown[] };
    expect(all.runs.map((r) => r.concurrency)).toEqual([1, 4, 16]);
    expect(all.skipped).toEqual([]);
    expect(d.text.stderr).not.toContain('skipped');
  });

  it('shows every timeout default and an example in --help', async () => {
    const c = captureIo();
    expect(await main(['bench', '--help'], c.io)).toBe(0);
    expect(c.text.stdout).toContain(
      '--first-token-timeout S   a request with no first token after S seconds fails (default 600)',
    );
    expect(c.text.stdout).toContain('(default 10)');
    expect(c.text.stdout).toContain(
      '--stall-timeout S         a stream silent for S seconds between tokens fails (default 60)',
    );
    expect(c.text.stdout).toMatch(/^examples:\n {2}spectune bench --url /m);
  });
});
