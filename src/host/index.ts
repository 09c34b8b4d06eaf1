export type { CommandResult, CommandStream, ExecOptions, Host, StreamOptions } from './types.js';
export { LocalHost, runArgv } from './local.js';
export { SshHost, controlDirBase, type SshHostOptions } from './ssh.js';
export { spawnStream } from './stream.js';
export { quoteArg, quoteArgv } from './shell-quote.js';
export { classifySshFailure, classifySudoFailure } from './ssh-errors.js';
export { expectOk, formatArgv } from './command-result.js';
export { openHost, type HostSpec } from './open.js';
