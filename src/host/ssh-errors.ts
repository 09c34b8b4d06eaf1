// Turn the OpenSSH client's failure (exit 255 plus its stderr) into one-line coded errors with a hint.
import { ToolError } from '../errors.js';

const HOSTKEY =
  /Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED|host key is known for|Host key for \S+ has changed/i;
const AUTH =
  /Permission denied \(|Too many authentication failures|no more authentication methods|Authentication failed/i;
const UNREACHABLE =
  /Connection refused|Connection timed out|Operation timed out|No route to host|Network is unreachable|Could not resolve hostname|closed by remote host|Name or service not known|Temporary failure in name resolution|Connection closed by|Connection reset|banner exchange|kex_exchange_identification|Broken pipe|Host is down/i;

// The most telling line of ssh's stderr (its fatal lines come last; skip banners and mux noise).
function pickSshLine(stderr: string, pattern: RegExp): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !/^@|^mux_client|ControlSocket/.test(l));
  return lines.find((l) => pattern.test(l)) ?? lines[lines.length - 1] ?? 'ssh failed';
}

// A coded error when ssh itself failed to run the command (exit 255 with an ssh diagnosis), else null.
export function classifySshFailure(target: string, exitCode: number | null, stderr: string): ToolError | null {
  if (exitCode !== 255) return null;
  if (HOSTKEY.test(stderr)) {
    return new ToolError(
      'E_SSH_HOSTKEY',
      `${target}: host key not trusted: ${pickSshLine(stderr, /Host key for|host key is known for|verification failed/i)}`,
      {
        hint: `spectune never disables host-key checking: check the key's fingerprint out of band, then add it (e.g. \`ssh ${target} true\` once interactively, or ssh-keyscan into known_hosts); if the key changed, remove the old one with ssh-keygen -R`,
      },
    );
  }
  if (AUTH.test(stderr)) {
    return new ToolError('E_SSH_AUTH', `${target}: authentication failed: ${pickSshLine(stderr, AUTH)}`, {
      hint: 'check the user and key (ssh-add -l, IdentityFile in ~/.ssh/config); spectune runs ssh with BatchMode=yes, so password prompts are not possible',
    });
  }
  if (UNREACHABLE.test(stderr)) {
    return new ToolError('E_SSH_UNREACHABLE', `${target}: unreachable: ${pickSshLine(stderr, UNREACHABLE)}`, {
      hint: 'check the address, that sshd runs on the host, and any ProxyJump/firewall in between (try `ssh HOST true`)',
    });
  }
  if (/^ssh: /m.test(stderr)) {
    return new ToolError('E_SSH_UNREACHABLE', `${target}: ssh failed: ${pickSshLine(stderr, /^ssh: /)}`, {
      hint: 'run `ssh HOST true` to see the full error',
    });
  }
  return null;
}

const SUDO_DENIED =
  /^sudo: (a password is required|a terminal is required|.*is not in the sudoers file|.*not allowed to (execute|run)|sorry, you must have a tty)/im;

// A coded error when `sudo -n` refused to run the command (or sudo is missing), else null.
export function classifySudoFailure(target: string, exitCode: number | null, stderr: string): ToolError | null {
  const hint =
    'give the ssh user passwordless sudo for systemctl, journalctl and the drop-in directory, or connect as root';
  if (exitCode === 1 && SUDO_DENIED.test(stderr)) {
    return new ToolError('E_NO_PERMISSION', `${target}: sudo refused: ${pickSshLine(stderr, SUDO_DENIED)}`, { hint });
  }
  if (exitCode === 127 && /sudo: (command )?not found|sudo: No such file/i.test(stderr)) {
    return new ToolError('E_NO_PERMISSION', `${target}: sudo is not installed`, { hint });
  }
  return null;
}
