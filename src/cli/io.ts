// Everything the CLI touches from the outside world, passed in so that tests can drive main() directly.

/** Streams and environment of one CLI invocation. */
export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

/** A CLI command: parses its own flags, calls one app/ function, renders, returns the exit code. */
export type Command = (argv: string[], io: CliIo) => Promise<number>;
