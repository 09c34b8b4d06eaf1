export type { CommandResult, ExecOptions, Host } from './types.js';
export { LocalHost, runArgv } from './local.js';
export { expectOk, formatArgv } from './command-result.js';
export { openHost, type HostSpec } from './open.js';
