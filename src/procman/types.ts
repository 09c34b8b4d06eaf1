// Types of the `process` service manager: unit-like service definitions, systemctl-show-like state, journal entries.

/** Restart= policies supported (systemd's on-abnormal/on-abort/on-watchdog are not needed here). */
export type RestartPolicy = 'no' | 'on-failure' | 'always';

/** A service defined like a systemd unit (times in seconds, fractions allowed). */
export interface ServiceDef {
  /** Description= (used in "Started <unit> - <description>."). */
  description?: string;
  /** ExecStart= as an argv array (no shell). */
  argv: string[];
  /** Environment=. Like systemd, a service otherwise gets only PATH, HOME, USER, LANG and a few more basics. */
  env?: Record<string, string>;
  /** Pass this process's whole environment on (not systemd-like; for operators who rely on their shell's). */
  inheritEnvironment?: boolean;
  /** WorkingDirectory=. */
  cwd?: string;
  /** Restart= (default "no"). */
  restart?: RestartPolicy;
  /** RestartSec= (default 0.1). */
  restartSec?: number;
  /** StartLimitBurst= (default 5). */
  startLimitBurst?: number;
  /** StartLimitIntervalSec= (default 10). */
  startLimitIntervalSec?: number;
  /** TimeoutStopSec= (default 90): SIGTERM, wait this long, then SIGKILL the process group. */
  timeoutStopSec?: number;
}

/** Service result values (systemd's service_result_table, the subset this manager produces). */
export type ServiceResult =
  | 'success'
  | 'exit-code'
  | 'signal'
  | 'core-dump'
  | 'timeout'
  | 'start-limit-hit'
  | 'resources';

/** `systemctl show`-like properties, values formatted as systemctl prints them. */
export interface ServiceShow {
  Id: string;
  Description: string;
  LoadState: 'loaded' | 'not-found';
  ActiveState: 'active' | 'inactive' | 'failed' | 'activating' | 'deactivating';
  SubState: 'dead' | 'running' | 'auto-restart' | 'stop-sigterm' | 'stop-sigkill' | 'failed';
  Result: ServiceResult;
  MainPID: string;
  ExecMainPID: string;
  /** 0 = not exited, 1 = CLD_EXITED, 2 = CLD_KILLED, 3 = CLD_DUMPED. */
  ExecMainCode: string;
  /** Exit code or signal number. */
  ExecMainStatus: string;
  NRestarts: string;
  Restart: string;
  TimeoutStopUSec: string;
  InvocationID: string;
  FragmentPath: string;
  DropInPaths: string;
}

/** One journal entry, shaped like a line of `journalctl -o json` (all values are strings). */
export interface JournalEntry {
  __CURSOR: string;
  __REALTIME_TIMESTAMP: string;
  __MONOTONIC_TIMESTAMP: string;
  _BOOT_ID: string;
  _HOSTNAME: string;
  PRIORITY: string;
  SYSLOG_IDENTIFIER: string;
  _PID: string;
  _COMM: string;
  _TRANSPORT: 'journal' | 'stdout';
  _SYSTEMD_UNIT: string;
  MESSAGE: string;
  /** Manager messages: the unit they are about, and which run of it. */
  UNIT?: string;
  INVOCATION_ID?: string;
  /** Service output: the run that wrote the line. */
  _SYSTEMD_INVOCATION_ID?: string;
  MESSAGE_ID?: string;
  UNIT_RESULT?: string;
  EXIT_CODE?: string;
  EXIT_STATUS?: string;
  N_RESTARTS?: string;
  JOB_TYPE?: string;
}

/** What `journal()` returns: matching entries and the cursor to continue after. */
export interface JournalPage {
  entries: JournalEntry[];
  /** Pass as afterCursor to get only newer entries (null when the journal is empty). */
  cursor: string | null;
}
