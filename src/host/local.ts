import { spawn } from 'node:child_process';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ToolError } from '../errors.js';
import { spawnStream } from './stream.js';
import type { CommandResult, CommandStream, ExecOptions, Host, StreamOptions } from './types.js';

// Run an argv with a timeout and abort signal, collecting output; shared by LocalHost and SshHost.
export function runArgv(hostName: string, argv: string[], opts: ExecOptions = {}): Promise<CommandResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: ['pipe', 'pipe', 'pipe'], signal: opts.signal });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    let spawnError: Error | null = null;
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
    });
    const timer = opts.timeoutMs
      ? setTimeout(() => {
          timedOut = true;
          child.kill('SIGKILL');
        }, opts.timeoutMs)
      : null;
    child.on('error', (e) => {
      spawnError = e;
    });
    child.stdin.on('error', () => {});
    if (opts.input !== undefined) child.stdin.end(opts.input);
    else child.stdin.end();
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      // an abort also arrives as an 'error'; only a failed spawn (ENOENT, EACCES) means "did not start"
      const notStarted = spawnError !== null && (spawnError as NodeJS.ErrnoException).code !== 'ABORT_ERR';
      if (notStarted) stderr += `${(spawnError as Error).message}\n`;
      resolve({
        host: hostName,
        argv,
        exitCode: notStarted ? 127 : code,
        signal: timedOut ? null : signal,
        timedOut,
        durationMs: Date.now() - started,
        stdout,
        stderr,
      });
    });
  });
}

/** This machine, without SSH. */
export class LocalHost implements Host {
  readonly name = 'local';

  // Run a command on this machine.
  exec(argv: string[], opts?: ExecOptions): Promise<CommandResult> {
    return runArgv(this.name, argv, opts);
  }

  // Stream a long-running local command (journalctl -f); kill() sends SIGTERM.
  stream(argv: string[], opts?: StreamOptions): CommandStream {
    return spawnStream(argv, opts);
  }

  // Read a local text file.
  async readFile(path: string): Promise<string> {
    try {
      return await readFile(path, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT')
        throw new ToolError('E_FILE_NOT_FOUND', `${path}: no such file`);
      throw e;
    }
  }

  // Write atomically: temp file in the same directory, then rename.
  async writeFile(path: string, content: string, opts: { mode?: number } = {}): Promise<void> {
    await mkdir(dirname(path), { recursive: true });
    const tmp = `${path}.spectune-tmp-${process.pid}`;
    await writeFile(tmp, content, { mode: opts.mode ?? 0o644 });
    await rename(tmp, path);
  }

  async close(): Promise<void> {}
}
