// Long-running commands whose output is consumed while it runs (e.g. `journalctl -f`), for both transports.
import { spawn } from 'node:child_process';
import type { CommandStream, StreamOptions } from './types.js';

// Spawn argv locally with piped output; kill() sends SIGTERM (and the abort signal does the same).
export function spawnStream(argv: string[], opts: StreamOptions & { stdin?: 'ignore' | 'pipe' } = {}): CommandStream {
  const child = spawn(argv[0], argv.slice(1), { stdio: [opts.stdin ?? 'ignore', 'pipe', 'pipe'] });
  let spawnError: Error | null = null;
  let stderrTail = '';
  child.on('error', (e) => {
    spawnError = e;
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    stderrTail = (stderrTail + d).slice(-4096);
  });
  const kill = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  };
  const onAbort = (): void => kill();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  const exited = new Promise<{ exitCode: number | null; signal: string | null; stderr: string }>((resolve) => {
    child.on('close', (code, signal) => {
      opts.signal?.removeEventListener('abort', onAbort);
      const err = spawnError as Error | null;
      resolve({ exitCode: err ? 127 : code, signal, stderr: err ? `${stderrTail}${err.message}\n` : stderrTail });
    });
  });
  return { stdout: child.stdout!, kill, exited };
}
