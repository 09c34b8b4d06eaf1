// Test helper: run the REAL built CLI (node bin/spectune.js) as a subprocess, building dist/ first when src/ is newer.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

// Newest modification time of any .ts file under a directory.
function newestMtime(dir: string): number {
  return Math.max(
    ...readdirSync(dir, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => statSync(join(dir, f)).mtimeMs),
  );
}

// Build dist/ when a source file is newer than the built CLI (tsc emits even when another folder has a type error).
export function ensureCliBuilt(): void {
  const built = join(ROOT, 'dist', 'cli', 'main.js');
  if (existsSync(built) && statSync(built).mtimeMs >= newestMtime(join(ROOT, 'src'))) return;
  const lock = join(ROOT, 'dist', '.cli-test-build.lock');
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  try {
    mkdirSync(lock);
  } catch {
    const until = Date.now() + 120_000;
    while (existsSync(lock) && Date.now() < until) execFileSync('sleep', ['0.2']);
    return;
  }
  try {
    execFileSync(
      process.execPath,
      [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'tsconfig.build.json')],
      { stdio: 'ignore' },
    );
  } catch {
    // tsc exits non-zero on any type error but still emits.
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** What one CLI run printed, its exit code and how long it took. */
export interface CliResult {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  ms: number;
}

// Run `spectune ...args`; killed (SIGKILL, this PID only) after timeoutMs.
export function runCli(
  args: string[],
  opts: { cwd?: string; env?: Record<string, string>; timeoutMs?: number; stdinText?: string } = {},
): Promise<CliResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'spectune.js'), ...args], {
      cwd: opts.cwd ?? ROOT,
      env: { ...process.env, NO_COLOR: '1', ...opts.env },
      stdio: [opts.stdinText === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    if (opts.stdinText !== undefined) child.stdin!.end(opts.stdinText);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, ms: Date.now() - started });
    });
  });
}

// A one-line spectune error, no stack trace (no "    at " frame, no "internal error").
export function isOneLineError(stderr: string): boolean {
  const lines = stderr.trim().split('\n');
  return lines.length === 1 && lines[0].startsWith('spectune: ') && !/internal error|\n\s+at /.test(stderr);
}
