// One `process` service with systemd's semantics: Type=simple start, restart policy with RestartSec and start
// rate limit, stop = SIGTERM then SIGKILL of the process group after TimeoutStopSec, first failure wins.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { basename } from 'node:path';
import { ToolError } from '../errors.js';
import {
  execMainCode,
  formatTimespan,
  isCleanExit,
  resultOfExit,
  toProcessExit,
  type ProcessExit,
} from './exit-status.js';
import { LineSplitter, type ProcJournal } from './journal.js';
import { msg, unitLabel, type ManagerMessage } from './messages.js';
import { listGroup, signalGroup } from './proc.js';
import type { ServiceDef, ServiceResult, ServiceShow } from './types.js';

type Phase = 'dead' | 'running' | 'auto-restart' | 'stop-sigterm' | 'stop-sigkill' | 'failed';

const ACTIVE_STATE: Record<Phase, ServiceShow['ActiveState']> = {
  dead: 'inactive',
  running: 'active',
  'auto-restart': 'activating',
  'stop-sigterm': 'deactivating',
  'stop-sigkill': 'deactivating',
  failed: 'failed',
};
/** The variables a service inherits from the manager (systemd passes a clean environment plus Environment=). */
const BASE_ENV = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LC_ALL', 'TMPDIR', 'TZ'];
/** How long to wait for a dead process's last output before logging its exit (output first, as in journald). */
const OUTPUT_DRAIN_MS = 250;

/** A managed service; all methods are called by the ProcessManager. */
export class ManagedService {
  readonly unit: string;
  def: ServiceDef;
  private readonly journal: ProcJournal;
  private readonly fragmentPath: string;
  private phase: Phase = 'dead';
  private result: ServiceResult = 'success';
  private mainPid = 0;
  private execMainPid = 0;
  private lastExit: ProcessExit | null = null;
  private nRestarts = 0;
  private invocationId = '';
  private limit = { begin: 0, num: 0 };
  private restartTimer: NodeJS.Timeout | null = null;
  private stopTimer: NodeJS.Timeout | null = null;
  private stopJob = false;
  private stopWaiters: (() => void)[] = [];

  constructor(unit: string, def: ServiceDef, journal: ProcJournal, fragmentPath: string) {
    this.unit = unit;
    this.def = def;
    this.journal = journal;
    this.fragmentPath = fragmentPath;
  }

  // `systemctl start`: no-op when running; refused (E_SERVICE_FAILED) when the start rate limit is hit.
  async start(): Promise<void> {
    if (this.phase === 'running') return;
    if (this.phase === 'stop-sigterm' || this.phase === 'stop-sigkill') await this.waitStopped();
    this.clearRestartTimer();
    if (!this.launch(true)) {
      throw new ToolError('E_SERVICE_FAILED', `Job for ${this.unit} failed: start request repeated too quickly`, {
        hint: `wait ${this.def.startLimitIntervalSec ?? 10}s or reset the failed state (resetFailed) before starting again`,
      });
    }
  }

  // `systemctl stop`: SIGTERM to the process group, SIGKILL after TimeoutStopSec; resolves when it is gone.
  async stop(): Promise<void> {
    this.stopJob = true;
    try {
      if (this.phase === 'auto-restart') {
        this.clearRestartTimer();
        this.phase = this.result === 'success' ? 'dead' : 'failed';
        this.log(msg.stopped(this.label()));
      } else if (this.phase === 'running') {
        this.log(msg.stopping(this.label()));
        this.phase = 'stop-sigterm';
        signalGroup(this.mainPid, 'SIGTERM');
        this.stopTimer = setTimeout(() => this.onStopTimeout(), (this.def.timeoutStopSec ?? 90) * 1000);
        await this.waitStopped();
      } else if (this.phase === 'stop-sigterm' || this.phase === 'stop-sigkill') {
        await this.waitStopped();
      }
    } finally {
      this.stopJob = false;
    }
  }

  // `systemctl reset-failed`: forget the failure and the start rate limit.
  resetFailed(): void {
    if (this.phase === 'failed') this.phase = 'dead';
    if (this.phase === 'dead') this.result = 'success';
    this.limit = { begin: 0, num: 0 };
  }

  // `systemctl show`: the properties spectune decides on.
  show(): ServiceShow {
    const running = ['running', 'stop-sigterm', 'stop-sigkill'].includes(this.phase);
    return {
      Id: this.unit,
      Description: this.def.description ?? this.unit,
      LoadState: 'loaded',
      ActiveState: ACTIVE_STATE[this.phase],
      SubState: this.phase,
      Result: this.result,
      MainPID: String(running ? this.mainPid : 0),
      ExecMainPID: String(this.execMainPid),
      ExecMainCode: execMainCode(this.lastExit),
      ExecMainStatus: String(this.lastExit?.status ?? 0),
      NRestarts: String(this.nRestarts),
      Restart: this.def.restart ?? 'no',
      TimeoutStopUSec: formatTimespan(this.def.timeoutStopSec ?? 90),
      InvocationID: this.invocationId,
      FragmentPath: this.fragmentPath,
      DropInPaths: '',
    };
  }

  // Start one run (manual or automatic); false when the start rate limit refused it.
  private launch(manual: boolean): boolean {
    if (!this.passStartLimit()) {
      this.failStartLimit();
      return false;
    }
    if (manual) this.nRestarts = 0;
    this.result = 'success';
    this.lastExit = null;
    this.invocationId = randomUUID().replace(/-/g, '');
    const [cmd, ...args] = this.def.argv;
    const child = spawn(cmd, args, {
      cwd: this.def.cwd,
      env: this.environment(),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.phase = 'running';
    this.mainPid = child.pid ?? 0;
    this.execMainPid = this.mainPid;
    this.log(msg.started(this.label()));
    this.captureOutput(child);
    this.watchExit(child, cmd);
    return true;
  }

  // Exactly one onMainExit per run: after the exit and its last output, or after a failed exec (203/EXEC).
  private watchExit(child: ChildProcess, cmd: string): void {
    let done = false;
    const finish = (exit: ProcessExit): void => {
      if (!done) {
        done = true;
        this.onMainExit(exit);
      }
    };
    child.on('error', (e) => {
      if (child.pid !== undefined) return;
      this.log(msg.execFailed(this.unit, cmd, e.message.replace(/^spawn \S+ /, '')));
      finish({ code: 'exited', status: 203 });
    });
    child.on('exit', (code, signal) => {
      const exit = toProcessExit(code, signal);
      const drained = new Promise<void>((r) => {
        child.on('close', () => r());
        setTimeout(r, OUTPUT_DRAIN_MS);
      });
      void drained.then(() => finish(exit));
    });
  }

  // Each line of stdout/stderr becomes a journal entry under the main PID, as journald does.
  private captureOutput(child: ChildProcess): void {
    const ident = basename(this.def.argv[0]);
    const pid = String(child.pid ?? 0);
    const invocation = this.invocationId;
    for (const stream of [child.stdout, child.stderr]) {
      const splitter = new LineSplitter();
      const emit = (line: string): void => {
        this.journal.append({
          PRIORITY: '6',
          SYSLOG_IDENTIFIER: ident,
          _PID: pid,
          _COMM: ident.slice(0, 15),
          _TRANSPORT: 'stdout',
          _SYSTEMD_UNIT: this.unit,
          _SYSTEMD_INVOCATION_ID: invocation,
          MESSAGE: line,
        });
      };
      stream?.setEncoding('utf8').on('data', (d: string) => splitter.push(d, emit));
      stream?.on('end', () => splitter.flush(emit));
    }
  }

  // The main process is gone: during a stop finish the stop, otherwise fail/restart per policy.
  private onMainExit(exit: ProcessExit): void {
    const pgid = this.mainPid;
    this.lastExit = exit;
    this.mainPid = 0;
    if (!isCleanExit(exit)) this.log(msg.mainExited(this.unit, exit));
    if (this.result === 'success') this.result = resultOfExit(exit);
    if (pgid) signalGroup(pgid, 'SIGKILL'); // leftovers of the group (systemd: rest of the cgroup)
    const stopping = this.phase === 'stop-sigterm' || this.phase === 'stop-sigkill';
    if (this.stopTimer) clearTimeout(this.stopTimer);
    this.stopTimer = null;
    this.enterDead(!stopping && !this.stopJob);
    if (stopping) {
      this.log(msg.stopped(this.label()));
      for (const w of this.stopWaiters.splice(0)) w();
    }
  }

  // service_enter_dead: log the outcome, then restart per Restart= or settle in dead/failed.
  private enterDead(allowRestart: boolean): void {
    this.log(this.result === 'success' ? msg.deactivated(this.unit) : msg.failedWithResult(this.unit, this.result));
    const policy = this.def.restart ?? 'no';
    const restart = allowRestart && (policy === 'always' || (policy === 'on-failure' && this.result !== 'success'));
    if (!restart) {
      this.phase = this.result === 'success' ? 'dead' : 'failed';
      return;
    }
    this.phase = 'auto-restart';
    this.restartTimer = setTimeout(() => this.autoRestart(), (this.def.restartSec ?? 0.1) * 1000);
  }

  // RestartSec= elapsed: count the restart, then start again (subject to the start rate limit).
  private autoRestart(): void {
    this.restartTimer = null;
    this.nRestarts += 1;
    this.log(msg.scheduledRestart(this.unit, this.nRestarts));
    this.log(msg.stopped(this.label()));
    this.launch(false);
  }

  // TimeoutStopSec= elapsed in stop-sigterm: SIGKILL every process of the group; the result becomes timeout.
  private onStopTimeout(): void {
    this.stopTimer = null;
    if (this.phase !== 'stop-sigterm' || !this.mainPid) return;
    this.log(msg.stopTimedOut(this.unit));
    for (const p of listGroup(this.mainPid, basename(this.def.argv[0])))
      this.log(msg.killing(this.unit, p.pid, p.comm));
    if (this.result === 'success') this.result = 'timeout';
    this.phase = 'stop-sigkill';
    signalGroup(this.mainPid, 'SIGKILL');
  }

  // systemd's ratelimit: at most StartLimitBurst starts per StartLimitIntervalSec window.
  private passStartLimit(): boolean {
    const now = Date.now();
    const intervalMs = (this.def.startLimitIntervalSec ?? 10) * 1000;
    if (intervalMs <= 0) return true;
    if (this.limit.begin === 0 || now > this.limit.begin + intervalMs) this.limit = { begin: now, num: 0 };
    if (this.limit.num >= (this.def.startLimitBurst ?? 5)) return false;
    this.limit.num += 1;
    return true;
  }

  // v252: the previous failure result is kept (first failure wins); start-limit-hit only after a success.
  private failStartLimit(): void {
    this.log(msg.startLimitHit(this.unit));
    if (this.result === 'success') this.result = 'start-limit-hit';
    this.log(msg.failedWithResult(this.unit, this.result));
    this.log(msg.failedToStart(this.label()));
    this.phase = 'failed';
  }

  private environment(): NodeJS.ProcessEnv {
    if (this.def.inheritEnvironment) return { ...process.env, ...this.def.env };
    const base = Object.fromEntries(
      BASE_ENV.filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]]),
    );
    return { ...base, ...this.def.env };
  }

  private waitStopped(): Promise<void> {
    return new Promise((resolve) => this.stopWaiters.push(resolve));
  }

  private clearRestartTimer(): void {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = null;
  }

  private label(): string {
    return unitLabel(this.unit, this.def.description);
  }

  // Manager messages look like PID 1's: SYSLOG_IDENTIFIER=systemd, sender unit init.scope, UNIT=<this unit>.
  private log(m: ManagerMessage): void {
    this.journal.append({
      PRIORITY: String(m.priority),
      SYSLOG_IDENTIFIER: 'systemd',
      _PID: String(process.pid),
      _COMM: 'spectune',
      _TRANSPORT: 'journal',
      _SYSTEMD_UNIT: 'init.scope',
      UNIT: this.unit,
      INVOCATION_ID: this.invocationId,
      MESSAGE: m.text,
      ...m.fields,
    });
  }
}
