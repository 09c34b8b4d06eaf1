// One transport interface for "this machine" and "a host over SSH"; every remote command is an argv array.

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
  /** Release connections (SSH control master). */
  close(): Promise<void>;
}
