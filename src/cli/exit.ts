import { ExitError, InternalError, ToolError } from '../errors.js';
import { redactText } from '../redact.js';
import type { CliIo } from './io.js';

/** Exit codes of the CLI. */
export const EXIT = { ok: 0, failure: 1, usage: 2, internal: 70 } as const;

// The single place where errors become output and exit codes.
export function reportError(e: unknown, io: CliIo): number {
  if (e instanceof ExitError) return e.exitCode;
  if (e instanceof ToolError) {
    io.stderr.write(`spectune: ${redactText(e.message)}${e.hint ? ` (hint: ${redactText(e.hint)})` : ''}\n`);
    return e.code === 'E_USAGE' || e.code === 'E_SIM_ARGS' ? EXIT.usage : EXIT.failure;
  }
  const err = e instanceof Error ? e : new InternalError(String(e));
  io.stderr.write(`spectune: internal error: ${redactText(err.stack ?? err.message)}\n`);
  io.stderr.write('This is a bug in spectune; please report it with the command you ran.\n');
  return EXIT.internal;
}
