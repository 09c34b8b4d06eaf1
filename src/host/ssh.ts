// A host reached through the system OpenSSH client, so the user's ~/.ssh/config, agent, ProxyJump and
// known_hosts all apply; one multiplexed connection per host makes each command cost milliseconds.
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ToolError } from '../errors.js';
import { describeErrno } from '../local-state.js';
import { expectOk } from './command-result.js';
import { runArgv } from './local.js';
import { quoteArgv } from './shell-quote.js';
import { classifySshFailure, classifySudoFailure } from './ssh-errors.js';
import { spawnStream } from './stream.js';
import type { CommandResult, CommandStream, ExecOptions, Host, StreamOptions } from './types.js';

/** How to reach the host. */
export interface SshHostOptions {
  /** An ssh_config file used instead of ~/.ssh/config (`ssh -F`). */
  sshConfig?: string;
  /** Run every command as root through `sudo -n --` (passwordless sudo required). */
  sudo?: boolean;
  /** ssh ConnectTimeout in seconds (default 10). */
  connectTimeoutSec?: number;
}

/** Idle seconds the control master stays up after the last command (ssh ControlPersist). */
const CONTROL_PERSIST_SEC = 60;
/** Empty control directories older than this were left by killed processes (their master is long gone). */
const STALE_CONTROL_DIR_MS = 10 * 60_000;
/** Beyond ConnectTimeout (TCP only): time for the key exchange, authentication and the first command. */
const CONNECT_GRACE_SEC = 20;
/** Unix socket paths are limited to ~108 bytes; %C expands to 40 hex characters. */
const MAX_CONTROL_DIR_LENGTH = 60;

/** Constant script (arguments arrive as $1 $2, never interpolated): temp file in the same dir, then rename. */
const WRITE_SCRIPT = [
  'set -e',
  'mkdir -p -- "$(dirname -- "$1")"',
  't=$(mktemp -- "$1.spectune-XXXXXX")',
  'trap \'rm -f -- "$t"\' EXIT',
  'cat > "$t"',
  'chmod -- "$2" "$t"',
  'mv -f -- "$t" "$1"',
  'trap - EXIT',
].join('\n');
/** Runs "$@" and terminates it when ssh's channel closes (stdin EOF), so a killed stream leaves nothing behind. */
const STREAM_SCRIPT =
  'exec 3<&0; "$@" </dev/null & p=$!; { cat <&3 >/dev/null 2>&1; kill -TERM "$p" 2>/dev/null; } >/dev/null 2>&1 & exec 3<&-; wait "$p"';

// Reject destinations that ssh would parse as options or that cannot be a host.
function checkTarget(target: string): void {
  if (!/^[A-Za-z0-9_.%+:@[\]-]+$/.test(target) || target.startsWith('-')) {
    throw new ToolError('E_USAGE', `invalid ssh destination ${JSON.stringify(target)}`, {
      hint: 'use user@host, host, or an alias from your ssh config',
    });
  }
}

/** Control directories not closed yet, with the options to reach their master: cleaned up at process exit. */
const openMasters = new Map<string, string[]>();
let exitHookInstalled = false;
/** A control directory's name: the owning process id, so that the next run can tell a dead owner's directory. */
const CONTROL_DIR_PREFIX = 'spectune-ssh-';
const OWNED_DIR = /^spectune-ssh-(\d+)-[A-Za-z0-9]{6}$/;
/** The signals whose default action ends the process without an 'exit' event. */
const FATAL_SIGNALS = ['SIGTERM', 'SIGHUP', 'SIGINT'] as const;

// A process that forgot close() (or is exiting on an error) must not leave masters or directories behind.
function closeMastersAtExit(): void {
  for (const [dir, exitArgv] of openMasters) {
    spawnSync(exitArgv[0], exitArgv.slice(1), { stdio: 'ignore', timeout: 2000 });
    rmSync(dir, { recursive: true, force: true });
  }
  openMasters.clear();
}

// On SIGTERM/SIGHUP/SIGINT with no other handler (a command that does not handle signals itself), close the masters
// and remove their directories, then die of the same signal as before. A command with its own handler (tune) ends
// through process.exit, which runs the 'exit' hook.
function closeMastersOnSignal(sig: (typeof FATAL_SIGNALS)[number]): void {
  const handler = (): void => {
    if (process.listenerCount(sig) > 1) return;
    closeMastersAtExit();
    for (const s of FATAL_SIGNALS) process.removeListener(s, signalHandlers[s]);
    process.kill(process.pid, sig);
  };
  signalHandlers[sig] = handler;
  process.on(sig, handler);
}
const signalHandlers = {} as Record<(typeof FATAL_SIGNALS)[number], () => void>;

// Whether a process id is alive (EPERM: alive, another user's).
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// Remove our own control directories left by killed processes (no hook runs on SIGKILL): a directory whose owning
// process is gone has its orphan master told to exit (`ssh -O exit` on each socket) and is removed; a directory of
// the older unnamed form only when empty and old (rmdir never removes one whose master still runs).
export function sweepStaleControlDirs(base: string): void {
  const uid = process.getuid?.();
  for (const name of readdirSync(base).filter((n) => n.startsWith(CONTROL_DIR_PREFIX))) {
    const path = join(base, name);
    try {
      const st = lstatSync(path);
      if (!st.isDirectory() || st.uid !== uid) continue;
      const owner = OWNED_DIR.exec(name);
      if (owner) {
        if (Number(owner[1]) === process.pid || isAlive(Number(owner[1]))) continue;
        for (const sock of readdirSync(path)) {
          spawnSync('ssh', ['-o', `ControlPath=${join(path, sock)}`, '-O', 'exit', '--', 'spectune-stale-master'], {
            stdio: 'ignore',
            timeout: 2000,
          });
        }
        rmSync(path, { recursive: true, force: true });
      } else if (Date.now() - st.mtimeMs > STALE_CONTROL_DIR_MS) {
        rmdirSync(path);
      }
    } catch {
      // in use (not empty) or already gone
    }
  }
}

/** Where the private ssh control directories go: $TMPDIR when its path is short enough for a unix socket, else /tmp. */
export function controlDirBase(): string {
  return join(tmpdir(), `${CONTROL_DIR_PREFIX}${process.pid}-XXXXXX`).length <= MAX_CONTROL_DIR_LENGTH
    ? tmpdir()
    : '/tmp';
}

// A private (0700) directory for the control socket, short enough for a unix socket path, named after this process.
function makeControlDir(): string {
  const base = controlDirBase();
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', closeMastersAtExit);
    for (const sig of FATAL_SIGNALS) closeMastersOnSignal(sig);
    sweepStaleControlDirs(base);
  }
  try {
    return mkdtempSync(join(base, `${CONTROL_DIR_PREFIX}${process.pid}-`));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? 'EIO';
    throw new ToolError(
      'E_LOCAL_STATE',
      `ssh control directory ${base}: cannot create ${CONTROL_DIR_PREFIX}* in it: ${describeErrno(code)}`,
      { hint: 'set TMPDIR to a directory you can write (ssh keeps its control socket there)', cause: e },
    );
  }
}

/** A remote machine over SSH; commands are argv arrays, quoted strictly for the remote shell. */
export class SshHost implements Host {
  readonly name: string;
  private readonly opts: SshHostOptions;
  private controlDir: string | null = null;
  private connecting: Promise<void> | null = null;

  constructor(target: string, opts: SshHostOptions = {}) {
    checkTarget(target);
    this.name = target;
    this.opts = opts;
  }

  // Run a command; throws E_SSH_* when ssh could not run it, E_NO_PERMISSION when sudo refused.
  async exec(argv: string[], opts: ExecOptions = {}): Promise<CommandResult> {
    await this.connect();
    const r = await runArgv(this.name, this.sshArgv(this.remoteArgv(argv)), opts);
    return this.checkTransport({ ...r, argv });
  }

  // Read a remote text file with `cat -- path`.
  async readFile(path: string): Promise<string> {
    const r = await this.exec(['cat', '--', path]);
    if (r.exitCode !== 0 && /No such file or directory/.test(r.stderr)) {
      throw new ToolError('E_FILE_NOT_FOUND', `${this.name}:${path}: no such file`);
    }
    return expectOk(r, `read ${path}`).stdout;
  }

  // Write atomically: mktemp in the same directory, content through stdin, chmod, mv -f.
  async writeFile(path: string, content: string, opts: { mode?: number } = {}): Promise<void> {
    const mode = (opts.mode ?? 0o644).toString(8);
    const r = await this.exec(['sh', '-c', WRITE_SCRIPT, 'spectune-write', path, mode], { input: content });
    expectOk(r, `write ${path}`);
  }

  // Stream a long-running command (journalctl -f); kill() ends the ssh session and the remote command.
  stream(argv: string[], opts: StreamOptions = {}): CommandStream {
    const remote = this.remoteArgv(['sh', '-c', STREAM_SCRIPT, 'spectune-stream', ...argv]);
    const s = spawnStream(this.sshArgv(remote), { ...opts, stdin: 'pipe' });
    const exited = s.exited.then((e) => {
      const err = classifySshFailure(this.name, e.exitCode, e.stderr);
      return err ? { ...e, stderr: `${err.message}\n` } : e;
    });
    return { ...s, exited };
  }

  // Stop the control master and remove its private directory.
  async close(): Promise<void> {
    const dir = this.controlDir;
    if (!dir) return;
    this.controlDir = null;
    this.connecting = null;
    openMasters.delete(dir);
    await runArgv(this.name, ['ssh', ...this.baseOptions(dir), '-O', 'exit', '--', this.name], { timeoutMs: 5000 });
    rmSync(dir, { recursive: true, force: true });
  }

  // Establish the control master once; concurrent first commands wait for it instead of racing.
  private connect(): Promise<void> {
    if (!this.connecting) {
      const timeoutMs = ((this.opts.connectTimeoutSec ?? 10) + CONNECT_GRACE_SEC) * 1000;
      this.connecting = runArgv(this.name, this.sshArgv(['true']), { timeoutMs })
        .then((r) => {
          if (r.timedOut) {
            throw new ToolError('E_SSH_UNREACHABLE', `${this.name}: no ssh session after ${timeoutMs / 1000} s`, {
              hint: 'the host accepts TCP but sshd does not answer; check the host (try `ssh HOST true`)',
            });
          }
          this.checkTransport(r);
        })
        .catch((e: unknown) => {
          this.connecting = null;
          throw e;
        });
    }
    return this.connecting;
  }

  // ssh options: the user's config still applies; we only add batch mode and multiplexing.
  private baseOptions(dir: string): string[] {
    const config = this.opts.sshConfig ? ['-F', this.opts.sshConfig] : [];
    return [
      ...config,
      '-o',
      'BatchMode=yes',
      '-o',
      'ControlMaster=auto',
      '-o',
      `ControlPath=${dir}/%C`,
      '-o',
      `ControlPersist=${CONTROL_PERSIST_SEC}`,
      '-o',
      `ConnectTimeout=${this.opts.connectTimeoutSec ?? 10}`,
      '-o',
      'ServerAliveInterval=15',
      '-o',
      'ServerAliveCountMax=3',
      '-o',
      'LogLevel=ERROR',
    ];
  }

  // The full local argv: ssh, options, destination, then the remote command as ONE strictly quoted string.
  private sshArgv(remote: string[]): string[] {
    // a directory swept away while this host was idle is replaced by a new private one, never re-created by name
    if (!this.controlDir || !existsSync(this.controlDir)) {
      if (this.controlDir) openMasters.delete(this.controlDir);
      this.controlDir = makeControlDir();
      openMasters.set(this.controlDir, ['ssh', ...this.baseOptions(this.controlDir), '-O', 'exit', '--', this.name]);
    }
    return ['ssh', ...this.baseOptions(this.controlDir), '-T', '--', this.name, quoteArgv(remote)];
  }

  private remoteArgv(argv: string[]): string[] {
    return this.opts.sudo ? ['sudo', '-n', '--', ...argv] : argv;
  }

  // Throw when the command never ran (ssh or sudo failed); otherwise return the result unchanged.
  private checkTransport(r: CommandResult): CommandResult {
    const sshError = classifySshFailure(this.name, r.exitCode, r.stderr);
    if (sshError) throw sshError;
    const sudoError = this.opts.sudo ? classifySudoFailure(this.name, r.exitCode, r.stderr) : null;
    if (sudoError) throw sudoError;
    return r;
  }
}
