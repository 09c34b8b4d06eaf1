// Coded errors: user/environment problems print a title and a hint (no stack); internal bugs print the stack.

/** Stable error codes; the CLI and tests key on these, never on message text. */
export type ErrorCode =
  | 'E_USAGE'
  | 'E_INPUT_UNUSABLE'
  | 'E_CONFIG_INVALID'
  | 'E_FILE_NOT_FOUND'
  | 'E_SSH_UNREACHABLE'
  | 'E_SSH_AUTH'
  | 'E_SSH_HOSTKEY'
  | 'E_NO_PERMISSION'
  | 'E_REMOTE_COMMAND'
  | 'E_UNIT_NOT_FOUND'
  | 'E_UNSAFE_VALUE'
  | 'E_SERVICE_FAILED'
  | 'E_ROLLBACK_FAILED'
  | 'E_ENGINE_FLAG'
  | 'E_BENCH_CONNECT'
  | 'E_BENCH_FIRST_TOKEN_TIMEOUT'
  | 'E_BENCH_FAILED'
  | 'E_STORE'
  | 'E_STORE_FULL'
  | 'E_LOCAL_STATE'
  | 'E_LOCKED'
  | 'E_CAMPAIGN_NOT_FOUND'
  | 'E_SIM_ARGS'
  | 'E_TIMEOUT'
  | 'E_FOREIGN_OVERRIDE'
  | 'E_LEASE_LAPSED';

/** Base of every expected failure: a stable code, a one-line message and a hint on how to fix it. */
export class ToolError extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;
  constructor(code: ErrorCode, message: string, opts: { hint?: string; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'ToolError';
    this.code = code;
    this.hint = opts.hint;
  }
}

/** Thrown when the failure has already been reported to the user; the CLI only sets the exit code. */
export class ExitError extends Error {
  readonly exitCode: number;
  constructor(exitCode: number) {
    super(`exit ${exitCode}`);
    this.name = 'ExitError';
    this.exitCode = exitCode;
  }
}

/** A bug in spectune itself: printed with its stack and a "please report" note. */
export class InternalError extends Error {
  constructor(message: string, opts: { cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'InternalError';
  }
}

// Narrowing helper used by callers that must tell expected failures from bugs.
export function isToolError(e: unknown): e is ToolError {
  return e instanceof ToolError;
}
