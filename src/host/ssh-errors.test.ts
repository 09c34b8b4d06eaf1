import { describe, expect, it } from 'vitest';
import { classifySshFailure, classifySudoFailure } from './ssh-errors.js';

// stderr texts as printed by OpenSSH 9.2 with LogLevel=ERROR (captured from the test hosts).
const CHANGED = `@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @
@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
IT IS POSSIBLE THAT SOMEONE IS DOING SOMETHING NASTY!
Host key for 10.250.77.2 has changed and you have requested strict checking.
Host key verification failed.
`;

describe('classifySshFailure', () => {
  it.each([
    ['ssh: connect to host 10.250.77.2 port 1: Connection refused\n', 'E_SSH_UNREACHABLE', 'Connection refused'],
    ['ssh: connect to host 10.250.77.3 port 22: No route to host\n', 'E_SSH_UNREACHABLE', 'No route to host'],
    ['ssh: connect to host 10.9.9.9 port 22: Connection timed out\n', 'E_SSH_UNREACHABLE', 'timed out'],
    ['ssh: Could not resolve hostname nosuch.invalid: Name or service not known\n', 'E_SSH_UNREACHABLE', 'resolve'],
    ['Connection to 10.250.77.2 closed by remote host.\n', 'E_SSH_UNREACHABLE', 'closed by remote host'],
    ['root@10.250.77.2: Permission denied (publickey).\n', 'E_SSH_AUTH', 'Permission denied'],
    [
      'No ED25519 host key is known for 10.250.77.2 and you have requested strict checking.\nHost key verification failed.\n',
      'E_SSH_HOSTKEY',
      'No ED25519 host key',
    ],
    [CHANGED, 'E_SSH_HOSTKEY', 'has changed'],
  ])('maps %j to %s with a one-line message', (stderr, code, fragment) => {
    const e = classifySshFailure('th1', 255, stderr);
    expect(e?.code).toBe(code);
    expect(e?.message).toContain(fragment);
    expect(e?.message).not.toContain('\n');
    expect(e?.hint).toBeTruthy();
  });

  it('leaves real command failures alone (other exit codes, or 255 from the command itself)', () => {
    expect(classifySshFailure('th1', 1, 'ssh: connect to host x port 22: Connection refused')).toBeNull();
    expect(classifySshFailure('th1', 255, '')).toBeNull();
    expect(classifySshFailure('th1', 255, 'my-tool: exiting with 255\n')).toBeNull();
  });
});

describe('classifySudoFailure', () => {
  it('maps a refused or missing sudo to E_NO_PERMISSION', () => {
    expect(classifySudoFailure('u@h', 1, 'sudo: a password is required\n')?.code).toBe('E_NO_PERMISSION');
    expect(
      classifySudoFailure(
        'u@h',
        1,
        'bob is not in the sudoers file.\nsudo: bob is not in the sudoers file.  This incident will be reported.\n',
      )?.code,
    ).toBe('E_NO_PERMISSION');
    expect(classifySudoFailure('u@h', 127, 'bash: line 1: sudo: command not found\n')?.message).toContain(
      'not installed',
    );
  });

  it('does not blame sudo for the command failing', () => {
    expect(classifySudoFailure('u@h', 1, 'Failed to restart x.service: Unit x.service not found.\n')).toBeNull();
  });
});
