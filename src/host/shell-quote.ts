// Strict POSIX quoting of argv for the remote shell that ssh always goes through: no argument can ever
// become shell syntax, whatever it contains (quotes, `;`, `$(...)`, backticks, newlines, globs).
import { ToolError } from '../errors.js';

// One argument as a single-quoted POSIX word ('' for the empty string, ' as '\'').
export function quoteArg(arg: string): string {
  if (arg.includes('\0')) {
    throw new ToolError('E_UNSAFE_VALUE', 'a command argument contains a NUL byte', {
      hint: 'NUL cannot be passed in a command line; remove it from the value',
    });
  }
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

// A whole argv as one remote command line; every argument is quoted, even plain ones, so nothing is special.
export function quoteArgv(argv: readonly string[]): string {
  if (argv.length === 0) throw new ToolError('E_USAGE', 'empty command');
  return argv.map(quoteArg).join(' ');
}
