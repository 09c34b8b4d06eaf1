// systemd's names and rules for how a main process ended (exit-status.c, process-util.c, signal names).
import { constants } from 'node:os';
import type { ServiceResult } from './types.js';

/** How the main process ended, as systemd's siginfo code. */
export interface ProcessExit {
  code: 'exited' | 'killed' | 'dumped';
  /** Exit status, or the signal number. */
  status: number;
}

const EXIT_NAMES: Record<number, string> = {
  0: 'SUCCESS',
  1: 'FAILURE',
  2: 'INVALIDARGUMENT',
  3: 'NOTIMPLEMENTED',
  4: 'NOPERMISSION',
  5: 'NOTINSTALLED',
  6: 'NOTCONFIGURED',
  7: 'NOTRUNNING',
  200: 'CHDIR',
  203: 'EXEC',
  217: 'USER',
};
/** Signals that dump core by default (systemd then says code=dumped). */
const CORE_SIGNALS = new Set([
  'SIGQUIT',
  'SIGILL',
  'SIGTRAP',
  'SIGABRT',
  'SIGBUS',
  'SIGFPE',
  'SIGSEGV',
  'SIGSYS',
  'SIGXCPU',
  'SIGXFSZ',
]);
/** A daemon killed by one of these exited cleanly (EXIT_CLEAN_DAEMON); SIGKILL is never clean. */
const CLEAN_SIGNALS = new Set(['SIGHUP', 'SIGINT', 'SIGTERM', 'SIGPIPE']);

// Node's (code, signal) of a child as systemd would record it.
export function toProcessExit(code: number | null, signal: NodeJS.Signals | null): ProcessExit {
  if (signal) {
    const num = constants.signals[signal] ?? 0;
    return { code: CORE_SIGNALS.has(signal) ? 'dumped' : 'killed', status: num };
  }
  return { code: 'exited', status: code ?? 0 };
}

// "1/FAILURE", "9/KILL", "42/n/a": the status part of "Main process exited, code=..., status=...".
export function formatStatus(e: ProcessExit): string {
  if (e.code === 'exited') return `${e.status}/${EXIT_NAMES[e.status] ?? 'n/a'}`;
  const name = Object.entries(constants.signals).find(([, n]) => n === e.status)?.[0];
  return `${e.status}/${name ? name.replace(/^SIG/, '') : 'n/a'}`;
}

// is_clean_exit() for a daemon: exit 0, or death by SIGHUP/SIGINT/SIGTERM/SIGPIPE.
export function isCleanExit(e: ProcessExit): boolean {
  if (e.code === 'exited') return e.status === 0;
  const name = Object.entries(constants.signals).find(([, n]) => n === e.status)?.[0] ?? '';
  return e.code === 'killed' && CLEAN_SIGNALS.has(name);
}

// The service result an unclean exit produces (service_sigchld_event).
export function resultOfExit(e: ProcessExit): ServiceResult {
  if (isCleanExit(e)) return 'success';
  return e.code === 'exited' ? 'exit-code' : e.code === 'dumped' ? 'core-dump' : 'signal';
}

// ExecMainCode as `systemctl show` prints it: 1 = CLD_EXITED, 2 = CLD_KILLED, 3 = CLD_DUMPED.
export function execMainCode(e: ProcessExit | null): string {
  if (!e) return '0';
  return e.code === 'exited' ? '1' : e.code === 'killed' ? '2' : '3';
}

// A systemd timespan as `systemctl show` prints it ("1min 30s", "500ms", "infinity").
export function formatTimespan(sec: number): string {
  if (!Number.isFinite(sec)) return 'infinity';
  let ms = Math.round(sec * 1000);
  const parts: string[] = [];
  for (const [unit, size] of [
    ['h', 3_600_000],
    ['min', 60_000],
    ['s', 1000],
    ['ms', 1],
  ] as const) {
    if (ms >= size) {
      parts.push(`${Math.floor(ms / size)}${unit}`);
      ms %= size;
    }
  }
  return parts.length ? parts.join(' ') : '0';
}
