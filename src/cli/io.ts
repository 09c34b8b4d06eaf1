// Everything the CLI touches from the outside world, passed in so that tests can drive main() directly.
import { PassThrough } from 'node:stream';

/** Streams and environment of one CLI invocation. */
export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

/** A CLI command: parses its own flags, calls one app/ function, renders, returns the exit code. */
export type Command = (argv: string[], io: CliIo) => Promise<number>;

/** An in-memory CliIo and what was written to it so far. */
export interface CapturedIo {
  io: CliIo;
  /** Everything written to stdout and stderr, updated as it is written. */
  text: { stdout: string; stderr: string };
}

// An io that keeps the output in memory, for programs (and tests) that call main() or a command directly.
export function captureIo(env: NodeJS.ProcessEnv = {}): CapturedIo {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const text = { stdout: '', stderr: '' };
  stdout.on('data', (d: Buffer) => {
    text.stdout += d.toString();
  });
  stderr.on('data', (d: Buffer) => {
    text.stderr += d.toString();
  });
  return { io: { stdout, stderr, env }, text };
}
