// One transport interface for "this machine" and "a host over SSH"; every remote command is an argv array.
import type { Readable } from 'node:stream';

/** Options of one command execution. */
export interface ExecOptions {
  /** Kill the command after this many milliseconds (result.timedOut = true). */
  timeoutMs?: number;
  /** Abort the command (e.g. Ctrl-C of the user). */
  signal?: AbortSignal;
  /** Bytes written to the command's stdin. */
  input?: string | Buffer;
}

/** The result of a command, whether it succeeded or not (execa-style: the result is the error). */
export interface CommandResult {
  host: string;
  argv: string[];
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  durationMs: number;
  stdout: string;
  stderr: string;
}

/** Options of a streaming command. */
export interface StreamOptions {
  /** Abort = kill() (e.g. Ctrl-C of the user). */
  signal?: AbortSignal;
}

/** A running command whose stdout is read while it runs (e.g. `journalctl -f -o json`). */
export interface CommandStream {
  /** The command's stdout, as it arrives. */
  stdout: Readable;
  /** Stop the command (SIGTERM locally; over SSH the remote command is terminated too). */
  kill(): void;
  /** Resolves when the command has ended, with the last 4 KiB of its stderr. */
  exited: Promise<{ exitCode: number | null; signal: string | null; stderr: string }>;
}

/** A machine spectune can run commands on and read/write files of. */
export interface Host {
  /** Human name: "local" or "user@host". */
  readonly name: string;
  /** Run argv (never a shell string); never throws for a non-zero exit. */
  exec(argv: string[], opts?: ExecOptions): Promise<CommandResult>;
  /** Read a text file; throws ToolError E_FILE_NOT_FOUND when missing. */
  readFile(path: string): Promise<string>;
  /** Write a text file atomically (temp file + rename), creating parent directories. */
  writeFile(path: string, content: string, opts?: { mode?: number }): Promise<void>;
  /** Where a path really is, for messages (the demo's process-manager host maps /etc/systemd/system into a folder). */
  whereIs?(path: string): string;
  /** Start a long-running command and stream its stdout (optional: test fakes may omit it). */
  stream?(argv: string[], opts?: StreamOptions): CommandStream;
  /** Release connections (SSH control master). */
  close(): Promise<void>;
}
