// Test helpers: spawn the REAL built `spectune sim` process, read its log, talk to it over loopback HTTP.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const BIN = join(ROOT, 'bin', 'spectune.js');
/** Fast start-up for tests: the 100 s default load takes 2 s. */
export const FAST = '0.02';

// Newest modification time under a folder (ms).
function newestMtime(dir: string): number {
  return Math.max(...readdirSync(dir).map((f) => statSync(join(dir, f)).mtimeMs));
}

// Build dist/ when src/sim is newer than the built simulator (other folders' type errors do not block emitting).
export function ensureBuilt(): void {
  const built = join(ROOT, 'dist', 'sim', 'server.js');
  if (existsSync(built) && statSync(built).mtimeMs >= newestMtime(join(ROOT, 'src', 'sim'))) return;
  const lock = join(ROOT, 'dist', '.sim-test-build.lock');
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  try {
    mkdirSync(lock);
  } catch {
    return waitForBuild(built);
  }
  try {
    execFileSync(
      process.execPath,
      [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'tsconfig.build.json')],
      { stdio: 'ignore' },
    );
  } catch {
    // tsc exits non-zero on any type error in the tree but still emits our files.
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

// Another worker is building: wait for its lock to go away.
function waitForBuild(built: string): void {
  const lock = join(ROOT, 'dist', '.sim-test-build.lock');
  const until = Date.now() + 120_000;
  while (existsSync(lock) && Date.now() < until) execFileSync('sleep', ['0.2']);
  if (!existsSync(built)) throw new Error('dist/sim was not built; run npm run build');
}

/** A running simulator process. */
export interface SimProc {
  proc: ChildProcess;
  pid: number;
  out: () => string;
  waitFor: (re: RegExp, timeoutMs?: number) => Promise<RegExpMatchArray>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  port: () => Promise<number>;
  stop: () => void;
}

// Spawn `node bin/spectune.js sim ...args`; the caller must call stop() (kills this PID only).
export function spawnSim(args: string[], env: NodeJS.ProcessEnv = {}): SimProc {
  const proc = spawn(process.execPath, [BIN, 'sim', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  proc.stdout!.on('data', (d) => {
    text += d;
  });
  proc.stderr!.on('data', (d) => {
    text += d;
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    proc.on('exit', (code, signal) => r({ code, signal })),
  );
  let exited = false;
  void exit.then(() => {
    exited = true;
  });
  const waitFor = async (re: RegExp, timeoutMs = 60_000) => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const m = text.match(re);
      if (m) return m;
      if (exited || Date.now() > until) throw new Error(`timed out waiting for ${re}; log:\n${text.slice(-3000)}`);
      await sleep(25);
    }
  };
  return {
    proc,
    pid: proc.pid!,
    out: () => text,
    waitFor,
    exit,
    port: async () => Number((await waitFor(/Uvicorn running on http:\/\/[^:]+:(\d+)/))[1]),
    stop: () => {
      if (!exited) proc.kill('SIGKILL');
    },
  };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// A free loopback TCP port (bound and released).
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

/** Result of one streamed chat completion. */
export interface StreamResult {
  ttftMs: number;
  totalMs: number;
  completionTokens: number;
  chunks: number;
  finishReason: string | null;
  /** Output tokens per second after the first token (per-request decode speed). */
  decodeTokS: number;
}

// Stream one chat completion and time it on the client.
export async function streamChat(
  port: number,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<StreamResult> {
  const t0 = performance.now();
  const r = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
      ...body,
    }),
  });
  if (!r.ok || !r.body) throw new Error(`HTTP ${r.status}`);
  let first: number | null = null;
  let buf = '';
  let chunks = 0;
  let usage: { completion_tokens: number } | null = null;
  let finishReason: string | null = null;
  const dec = new TextDecoder();
  for await (const c of r.body as unknown as AsyncIterable<Uint8Array>) {
    buf += dec.decode(c, { stream: true });
    let i: number;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const ev = buf.slice(0, i);
      buf = buf.slice(i + 2);
      if (ev === 'data: [DONE]') continue;
      const j = JSON.parse(ev.slice('data: '.length));
      if (j.usage) usage = j.usage;
      else if (j.choices[0].finish_reason) finishReason = j.choices[0].finish_reason;
      else {
        chunks++;
        first ??= performance.now();
      }
    }
  }
  const end = performance.now();
  const n = usage?.completion_tokens ?? 0;
  return {
    ttftMs: (first ?? end) - t0,
    totalMs: end - t0,
    completionTokens: n,
    chunks,
    finishReason,
    decodeTokS: (n - 1) / ((end - (first ?? end)) / 1000),
  };
}
