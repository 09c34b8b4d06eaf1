import { ToolError } from '../errors.js';
import { redactArgv, redactText } from '../redact.js';
import type { CommandResult } from './types.js';

// Lines of stderr that look like errors, so a failure message ends with the useful part only.
function pickErrorLines(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const errorish = lines.filter((l) =>
    /error|fail|denied|not found|no such|invalid|refused|cannot|can't|unknown/i.test(l),
  );
  return (errorish.length ? errorish : lines).slice(-3).join(' | ');
}

// Render a command for messages, with secrets redacted.
export function formatArgv(argv: readonly string[]): string {
  return redactArgv(argv)
    .map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : JSON.stringify(a)))
    .join(' ');
}

// Throw a coded error unless the command succeeded; precedence: unreachable, timeout, signal, exit code.
export function expectOk(r: CommandResult, what?: string): CommandResult {
  if (r.exitCode === 0 && !r.timedOut && !r.signal) return r;
  const label = what ?? formatArgv(r.argv);
  const tail = redactText(pickErrorLines(r.stderr));
  if (r.timedOut)
    throw new ToolError('E_TIMEOUT', `${r.host}: ${label} timed out after ${r.durationMs} ms`, {
      hint: 'the host is slow or the command hangs; retry or raise the timeout',
    });
  if (r.signal) throw new ToolError('E_REMOTE_COMMAND', `${r.host}: ${label} was killed by ${r.signal}`);
  if (
    /permission denied|access denied|interactive authentication required|not in the sudoers|a password is required/i.test(
      r.stderr,
    )
  ) {
    throw new ToolError('E_NO_PERMISSION', `${r.host}: ${label}: permission denied${tail ? ` (${tail})` : ''}`, {
      hint: 'connect as root or give the user passwordless sudo for systemctl and journalctl',
    });
  }
  throw new ToolError(
    'E_REMOTE_COMMAND',
    `${r.host}: ${label} failed with exit code ${r.exitCode}${tail ? `: ${tail}` : ''}`,
  );
}
