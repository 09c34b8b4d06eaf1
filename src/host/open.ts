import { LocalHost } from './local.js';
import { SshHost } from './ssh.js';
import type { Host } from './types.js';

/** How to reach a host: undefined = this machine, otherwise an ssh destination ("user@host" or an ssh_config alias). */
export interface HostSpec {
  target?: string;
  /** Extra ssh_config file (tests use the test hosts' config). */
  sshConfig?: string;
  /** Run commands through `sudo -n` (for a non-root ssh user with passwordless sudo). */
  sudo?: boolean;
  /** ssh ConnectTimeout in seconds. */
  connectTimeoutSec?: number;
}

// Open the transport for a --host flag: this machine, or SSH through the system OpenSSH client.
export async function openHost(spec: HostSpec = {}): Promise<Host> {
  if (!spec.target || spec.target === 'local' || spec.target === 'localhost') return new LocalHost();
  return new SshHost(spec.target, {
    sshConfig: spec.sshConfig,
    sudo: spec.sudo,
    connectTimeoutSec: spec.connectTimeoutSec,
  });
}
