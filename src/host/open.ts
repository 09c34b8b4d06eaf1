import { LocalHost } from './local.js';
import type { Host } from './types.js';

/** How to reach a host: undefined = this machine, otherwise an ssh destination ("user@host" or an ssh_config alias). */
export interface HostSpec {
  target?: string;
  /** Extra ssh_config file (tests use the test hosts' config). */
  sshConfig?: string;
}

// Open the transport for a --host flag (SSH support lands in ssh.ts).
export async function openHost(spec: HostSpec = {}): Promise<Host> {
  if (!spec.target || spec.target === 'local' || spec.target === 'localhost') return new LocalHost();
  const sshModule = './ssh.js'; // replaced by a static import once ssh.ts lands
  const { SshHost } = (await import(sshModule)) as { SshHost: new (t: string, o: { sshConfig?: string }) => Host };
  return new SshHost(spec.target, { sshConfig: spec.sshConfig });
}
