// The service controller: plan, deploy, restart safely, wait for readiness failing fast, stop crash loops and
// roll back, recording every action. This is the library API the tuner and the CLI commands use.
import type { Diagnosis } from '../diagnose/index.js';
import { getEngine } from '../engines/registry.js';
import type { EngineAdapter, EngineName, EngineSettings } from '../engines/types.js';
import { isToolError, ToolError } from '../errors.js';
import { ignoreEvents } from '../events.js';
import type { ServiceEventSink } from './events.js';
import type { Host } from '../host/types.js';
import { createMemoryActionLog, type ActionLog } from './action-log.js';
import { diagnoseCollaborators, type Collaborators } from './collaborators.js';
import {
  RollbackFailedError,
  type ExecStarts,
  type FailedStart,
  type RankLook,
  type ReadyResult,
  type RollbackPlan,
  type RollbackResult,
  type ServiceControllerOptions,
  type ServiceStatus,
  type StopOptions,
} from './controller-types.js';
import { asCrashLoop, failureTimestampMs, fallbackVerdict } from './crash-loop.js';
import {
  applyDeploy,
  describeRollbackTarget,
  listVersions,
  markVersionGood,
  prepareVersion,
  readUnitMode,
  readVersions,
  restoreVersion,
  type Version,
} from './deploy.js';
import {
  armLease,
  hasTrialDropIn,
  leasePaths,
  releaseLease,
  startRenewing,
  TRIAL_DROPIN_NAME,
  type LeaseRenewer,
} from './lease.js';
import { expectOk } from '../host/command-result.js';
import { createHttpProber, joinUrl, readEngineInfo, type Prober } from './health.js';
import { checkEndpointPort, type EndpointSource } from './endpoint-port.js';
import { describeHooks, NO_HOOKS, runHooks, type RestartHooks } from './hooks.js';
import { renderShort } from './journal.js';
import { planDeploy, readSettings, type Changes, type DeployPlan } from './plan.js';
import { createProgressReporter } from './progress.js';
import { watchStart, type Baseline, type Tracker } from './readiness.js';
import { prepareStop, type DrainEstimate } from './safe-stop.js';
import { isStartingOrUp, type UnitState } from './show.js';
import { sleep } from './sleep.js';
import {
  DEFAULT_READY_TIMEOUT_MS,
  ReadyTimeoutError,
  asTimeoutVerdict,
  formatSeconds,
  readLastSeen,
} from './start-deadline.js';
import {
  catUnit,
  controlUnit,
  lastJournalCursor,
  measureClockOffsetMs,
  readJournalAfter,
  readKernelLog,
  showUnit,
} from './systemd.js';
import { laterForeignDropIns, viewUnit } from './unit-view.js';
import {
  DROPIN_NAME,
  dropInPath,
  isOperatorsOwnConfig,
  effectiveEnvironment,
  effectiveListValue,
  normalizeUnitName,
  versionPath,
  type UnitFile,
} from './unit.js';

export { RollbackFailedError } from './controller-types.js';
export { DEFAULT_READY_TIMEOUT_MS, ReadyTimeoutError, type LastSeen } from './start-deadline.js';
export type {
  ExecStarts,
  FailedStart,
  RankLook,
  ReadyResult,
  RollbackPlan,
  RollbackResult,
  ServiceControllerOptions,
  ServiceStatus,
  StopOptions,
} from './controller-types.js';

/** How a follow ends when nothing fails: a monitoring window, or a start-up deadline. */
type FollowMode = { monitorMs: number } | { deadlineMs: number };

/** systemd's line when a stop ran past TimeoutStopSec and it killed the unit. */
const STOP_TIMEOUT_LINE = /State 'stop-sigterm' timed out\. Killing\./;

/** The candidate check is one quick command; longer means the host is not answering. */
const LEASE_CHECK_TIMEOUT_MS = 30_000;

/** How long checkLoop watches a running unit: several RestartSec periods and a start-up of a fast-failing engine. */
const LOOP_CHECK_MS = 10_000;

// spectune's own drop-in in force among the unit's files: the runtime candidate when one runs, else the /etc one.
function ourDropIn(files: UnitFile[]): UnitFile | undefined {
  return (
    files.find((f) => f.path.endsWith(`/${TRIAL_DROPIN_NAME}`)) ?? files.find((f) => f.path.endsWith(`/${DROPIN_NAME}`))
  );
}

// Whether a runtime candidate drop-in is among the unit's files.
function hasTrial(files: UnitFile[]): boolean {
  return files.some((f) => f.path.endsWith(`/${TRIAL_DROPIN_NAME}`));
}

/** Controls one unit on one host (build it with createServiceController). */
export class ServiceController {
  readonly unit: string;
  readonly host: Host;
  readonly engine: EngineName;
  private readonly opts: ServiceControllerOptions;
  private readonly onEvent: ServiceEventSink;
  private readonly actionLog: ActionLog;
  private readonly prober: Prober;
  private readonly adapter: EngineAdapter;
  private readonly healthUrl: string;
  private readonly collab: Collaborators;
  /** The start spectune made last, for waitReady. */
  private baseline: Baseline | null = null;
  /** Renews the lease of a provisional candidate until it is confirmed or rolled back. */
  private renewer: LeaseRenewer | null = null;
  /** Whether this run holds the lease around its host lock (holdLease), not only while a candidate is provisional. */
  private leaseHeld = false;
  /** The unit file's mode, kept by the drop-ins (read at the first deploy). */
  private unitMode: number | undefined;
  /** The operator's restart hooks (target.hooks). */
  private readonly hooks: RestartHooks;
  /** A restart spectune made whose postReady hooks have not run yet. */
  private postReadyPending = false;

  constructor(opts: ServiceControllerOptions) {
    this.unit = normalizeUnitName(opts.unit);
    checkReadyTimeout(opts.readyTimeoutMs);
    this.host = opts.host;
    this.engine = opts.engine;
    this.opts = opts;
    this.onEvent = opts.onEvent ?? ignoreEvents;
    this.actionLog = opts.actionLog ?? createMemoryActionLog();
    this.prober = opts.prober ?? createHttpProber(opts.apiKey);
    this.adapter = getEngine(opts.engine);
    this.healthUrl = joinUrl(opts.endpoint, this.adapter.healthPath);
    this.collab = opts.collaborators ?? diagnoseCollaborators;
    this.hooks = opts.hooks ?? NO_HOOKS;
  }

  // Unit state, engine settings in force, health (not asked with health: false: a worker rank serves no HTTP).
  async status(o: { health?: boolean } = {}): Promise<ServiceStatus> {
    const [state, inForce, versions] = await Promise.all([
      showUnit(this.host, this.unit),
      this.readInForce(),
      readVersions(this.host, this.unit),
    ]);
    const health =
      o.health === false
        ? { ok: false, status: null, error: 'not asked: a worker rank serves no HTTP', url: '' }
        : await this.prober.health(this.healthUrl);
    return {
      host: this.host.name,
      unit: this.unit,
      state,
      execStart: inForce.execStart,
      settings: inForce.settings,
      dropIn: !!ourDropIn(inForce.files),
      versions,
      health,
      view: viewUnit(inForce.files),
    };
  }

  // The engine's info JSON (SGLang /server_info), asked with the key; null when the engine has none or it is unavailable.
  readInfo(): Promise<unknown | null> {
    return readEngineInfo(this.opts.endpoint, this.adapter, this.opts.apiKey);
  }

  // Plan a deploy of engine changes on top of what is in force (pure once the unit is read).
  async plan(
    changes: Changes,
    p: { environment?: Record<string, string | null>; timeoutStopSec?: number | null } = {},
  ): Promise<DeployPlan> {
    const files = await catUnit(this.host, this.unit);
    const plan = planDeploy(files[0].text, files.slice(1), this.engine, changes, {
      unit: this.unit,
      unitPath: files[0].path,
      lease: this.opts.lease,
      ...p,
    });
    // Every file in force, and each later drop-in not spectune's that would override what this plan deploys.
    const later = laterForeignDropIns(files).map(
      (l) =>
        `${this.host.name}: ${l.path} sorts after spectune's drop-in and sets ${l.keys.join(', ')}: it overrides what this plan deploys (move it, or rename it below 90-)`,
    );
    const viewed = { ...plan, filesInForce: viewUnit(files).files, warnings: [...plan.warnings, ...later] };
    const hooks = describeHooks(this.hooks);
    return hooks.length && !plan.noop ? { ...viewed, hooks } : viewed;
  }

  // The version number this plan would get here (records the baseline first): a group writes the largest on all ranks.
  async prepareVersion(plan: DeployPlan): Promise<number> {
    this.unitMode ??= await readUnitMode(this.host, plan.unitPath);
    return prepareVersion(this.host, plan, this.unitMode);
  }

  // Deploy a plan and restart safely (a failed restart puts the previous drop-in back); follow with waitReady().
  // `o.version`: the group's one version number for this change.
  async apply(
    plan: DeployPlan,
    stop: StopOptions = {},
    o: { version?: number } = {},
  ): Promise<{ version: number; drain: DrainEstimate | null }> {
    if ((await this.readInForce()).execStart !== plan.currentExecStart) {
      throw new ToolError('E_INPUT_UNUSABLE', `${this.unit} changed since the plan was made`, { hint: 'plan again' });
    }
    this.unitMode ??= await readUnitMode(this.host, plan.unitPath);
    const lease = plan.lease ?? undefined;
    const { version, previous } = await applyDeploy(plan, this.host, this.onEvent, {
      lease,
      mode: this.unitMode,
      version: o.version,
    });
    if (lease && !this.renewer) this.renewer = startRenewing(this.host, this.unit, lease, (m) => this.log('warn', m));
    try {
      // Inside: an action log that cannot be written (E_LOCAL_STATE) puts the previous drop-in back like a failed restart.
      await this.act('deploy', `drop-in version ${version} with ${JSON.stringify(plan.changes)}`);
      return { version, drain: await this.restart(`apply ${JSON.stringify(plan.changes)}`, stop) };
    } catch (e) {
      const restored = await restoreVersion(this.host, this.unit, previous, lease ? null : plan.dropInText, {
        leased: !!lease,
        mode: this.unitMode,
        keepLease: this.leaseHeld,
      }).then(
        () => true,
        () => false,
      );
      this.stopRenewing();
      if (isToolError(e) && e.code === 'E_LOCAL_STATE' && restored) {
        throw new ToolError(
          'E_LOCAL_STATE',
          `${e.message}; ${this.host.name}: ${this.unit} was put back on ${previous === 'none' ? "the unit's own config" : `version ${previous}`} before any restart (the candidate never ran)`,
          { hint: e.hint, cause: e },
        );
      }
      throw e;
    }
  }

  // Safe (re)start: quiesce and drain when the unit is up, then restart, keeping the baseline for waitReady.
  async restart(why: string, stop: StopOptions = {}): Promise<DrainEstimate | null> {
    const state = await showUnit(this.host, this.unit);
    if (state.activeState === 'active')
      await runHooks('preStop', this.hooks, (m) => this.log('info', `${this.unit}: ${m}`));
    const drain = state.activeState === 'active' ? await this.drainBeforeStop(state, stop) : null;
    this.postReadyPending = this.hooks.postReady.length > 0;
    const [cursor, clockOffsetMs] = await Promise.all([
      lastJournalCursor(this.host, this.unit),
      measureClockOffsetMs(this.host),
    ]);
    await this.act('restart', why);
    const startedAt = Date.now();
    await controlUnit(this.host, 'restart', this.unit);
    await this.reportStopTimeout(cursor);
    const after = await showUnit(this.host, this.unit);
    this.baseline = {
      mainPid: after.mainPid,
      nRestarts: after.nRestarts,
      cursor,
      clockOffsetMs,
      startedAt,
      sawStart: true,
    };
    return drain;
  }

  // Wait for the last start to be ready, or diagnose its failure and stop a crash loop; a start still neither
  // ready nor failed at its deadline (timeoutMs, else the readyTimeoutMs option) fails with error E_TIMEOUT.
  async waitReady(w: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<ReadyResult> {
    checkReadyTimeout(w.timeoutMs);
    const base = this.baseline ?? (await this.currentBaseline());
    this.baseline = null;
    const deadlineMs = w.timeoutMs ?? this.opts.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;
    return (await this.follow(base, { deadlineMs }, w.signal)) as ReadyResult;
  }

  // Follow the last start of a worker rank (it logs no ready line and serves no HTTP): ready once it ran through the
  // watch window (windowMs, default the loop check's) without failing; a failure is diagnosed and stopped as in waitReady.
  async waitRunning(w: { signal?: AbortSignal; windowMs?: number } = {}): Promise<ReadyResult> {
    const base = this.baseline ?? (await this.currentBaseline());
    this.baseline = null;
    const r = await this.follow(base, { monitorMs: w.windowMs ?? LOOP_CHECK_MS }, w.signal);
    return r.status === 'stable' ? { status: 'ready', elapsedMs: Date.now() - base.startedAt } : r;
  }

  // Watch a running unit for a while: a crash loop (even one `systemctl status` shows as active) is diagnosed and stopped.
  async checkLoop(w: { windowMs?: number; signal?: AbortSignal } = {}): Promise<{ status: 'stable' } | FailedStart> {
    const base = await this.currentBaseline();
    // A stopped unit cannot loop; anything else (even between two starts, with no main PID) is watched.
    if (!base.mainPid && (await showUnit(this.host, this.unit)).activeState === 'inactive') return { status: 'stable' };
    const r = await this.follow(base, { monitorMs: w.windowMs ?? LOOP_CHECK_MS }, w.signal);
    return r.status === 'ready' ? { status: 'stable' } : r;
  }

  // Stop a crash loop (or a failed start): systemctl stop, then reset-failed so the next start is clean.
  async stopLoop(why = 'stop the crash loop'): Promise<void> {
    const cursor = await lastJournalCursor(this.host, this.unit);
    await this.act('stop', why);
    await controlUnit(this.host, 'stop', this.unit);
    await this.reportStopTimeout(cursor);
    await controlUnit(this.host, 'reset-failed', this.unit);
  }

  // A stop that ran past TimeoutStopSec ends in systemd's SIGKILL: say so (from the journal), never hide it.
  private async reportStopTimeout(cursor: string | null): Promise<void> {
    const entries = await readJournalAfter(this.host, this.unit, cursor).catch(() => []);
    const line = entries.find((e) => STOP_TIMEOUT_LINE.test(e.message));
    if (!line) return;
    this.log(
      'warn',
      `${this.host.name} ${this.unit}: the stop timed out: systemd logged "${line.message.trim()}" (the engine was killed with SIGKILL after TimeoutStopSec)`,
    );
  }

  // The rank as it is now, read-only: the version in force and the known-good one, whether a candidate (runtime
  // drop-in) is in force, the unit's state; used to look before acting (resume).
  async look(): Promise<RankLook> {
    const [versions, files, state] = await Promise.all([
      readVersions(this.host, this.unit),
      catUnit(this.host, this.unit),
      showUnit(this.host, this.unit),
    ]);
    // No `current` marker: spectune never deployed here, the unit's own config runs ('none').
    const onGood = !hasTrial(files) && (versions.current ?? 'none') === (versions.good ?? 'none');
    return { host: this.host.name, unit: this.unit, current: versions.current, good: versions.good, onGood, state };
  }

  // Put the known-good config back and restart without waiting for readiness (a rank whose peer is unreachable cannot
  // become ready before the peer is back); nothing happens when the rank already runs known-good and is up.
  async revertToGood(why: string): Promise<Version> {
    const look = await this.look();
    const target: Version = look.good ?? 'none';
    if (look.onGood && isStartingOrUp(look.state)) return target;
    const files = await catUnit(this.host, this.unit);
    refuseForeignOverride(this.host.name, files);
    const etc = files.find((f) => f.path.endsWith(`/${DROPIN_NAME}`))?.text ?? null;
    await restoreVersion(this.host, this.unit, target, etc, {
      leased: !!this.opts.lease || hasTrial(files),
      mode: this.unitMode,
    });
    this.stopRenewing();
    await this.act('rollback', `returned to ${describeRollbackTarget(target)} (${why})`);
    await this.restart(`rollback to version ${target} (${why})`);
    this.baseline = null;
    return target;
  }

  // What rollback() would do, read-only: the version (`to`, default the last known-good), the drop-in change, or
  // why there is nothing to do (spectune never deployed here; or the unit is active and already runs that version).
  async planRollback(to?: Version): Promise<RollbackPlan> {
    const [versions, files, state] = await Promise.all([
      readVersions(this.host, this.unit),
      catUnit(this.host, this.unit),
      showUnit(this.host, this.unit),
    ]);
    const version: Version = to ?? versions.good ?? 'none';
    refuseForeignOverride(this.host.name, files);
    const dropInNow = ourDropIn(files)?.text ?? null;
    const dropInAfter = version === 'none' ? null : await this.readKeptVersion(version);
    let nothing: string | null = null;
    if (to === undefined && dropInNow === null && versions.good === null) {
      nothing = `nothing to roll back: no spectune drop-in on ${this.unit} (spectune never deployed to it); it was left as it is`;
    } else if (dropInNow === dropInAfter && state.activeState === 'active') {
      const which =
        version === 'none'
          ? 'its own config (no spectune drop-in)'
          : `${to === undefined ? 'known-good ' : ''}version ${version}`;
      nothing = `nothing to roll back: ${this.unit} already runs ${which} and is active; it was left as it is`;
    }
    const steps = [
      dropInAfter === null ? `rm -f ${dropInPath(this.unit)}` : `write ${dropInPath(this.unit)} (version ${version})`,
      'systemctl daemon-reload',
      `systemctl restart ${this.unit} (after the drain check)`,
      'wait for the ready line and the health endpoint',
      `mark version ${version} known-good`,
    ];
    return {
      unit: this.unit,
      version,
      nothing,
      dropInPath: dropInPath(this.unit),
      dropInNow,
      dropInAfter,
      steps,
      filesInForce: viewUnit(files).files,
    };
  }

  // The text of a kept drop-in version; a version not kept is the user's mistake, named with the ones that are.
  private async readKeptVersion(version: number): Promise<string> {
    try {
      return await this.host.readFile(versionPath(this.unit, version));
    } catch (e) {
      if (!isToolError(e) || e.code !== 'E_FILE_NOT_FOUND') throw e;
      const kept = await listVersions(this.host, this.unit);
      throw new ToolError('E_INPUT_UNUSABLE', `${this.unit} has no kept version ${version}`, {
        hint: kept.length
          ? `kept versions: ${kept.join(', ')}, or none (the operator's unit alone)`
          : "nothing is kept yet; none is the operator's unit alone",
      });
    }
  }

  // Return to the last known-good drop-in (or none; or version `to`), restart and verify readiness (within
  // readyTimeoutMs; a worker rank: running through the watch window); E_ROLLBACK_FAILED if that fails too.
  async rollback(
    w: StopOptions & { readyTimeoutMs?: number; to?: Version; worker?: boolean } = {},
  ): Promise<RollbackResult> {
    const target: Version = w.to ?? (await readVersions(this.host, this.unit)).good ?? 'none';
    const files = await catUnit(this.host, this.unit);
    refuseForeignOverride(this.host.name, files);
    const etc = files.find((f) => f.path.endsWith(`/${DROPIN_NAME}`))?.text ?? null;
    await restoreVersion(this.host, this.unit, target, etc, {
      leased: !!this.opts.lease || hasTrial(files),
      mode: this.unitMode,
      keepLease: this.leaseHeld,
    });
    this.stopRenewing();
    await this.act('rollback', `returned to ${describeRollbackTarget(target)}`);
    await this.restart(`rollback to version ${target}`, w);
    const r = w.worker
      ? await this.waitRunning({ signal: w.signal })
      : await this.waitReady({ signal: w.signal, timeoutMs: w.readyTimeoutMs });
    if (r.status === 'ready') return { status: 'rolled_back', version: target, elapsedMs: r.elapsedMs };
    throw new RollbackFailedError(
      `${this.host.name}: rollback of ${this.unit} to version ${target} failed too: ${r.verdict.summary}`,
      r.verdict,
    );
  }

  // Whether a provisional candidate is still in force (its runtime drop-in there: the lease did not lapse); renews
  // the lease on the way. True when nothing is provisional.
  async candidateStillInForce(): Promise<boolean> {
    const p = leasePaths(this.unit);
    const r = await this.host.exec(
      [
        'sh',
        '-c',
        'if [ -e "$1" ]; then [ -e "$2" ] && touch -c -- "$3"; fi',
        'spectune-check',
        p.provisional,
        p.trial,
        p.lease,
      ],
      { timeoutMs: LEASE_CHECK_TIMEOUT_MS },
    );
    expectOk({ ...r, exitCode: r.exitCode === 1 ? 0 : r.exitCode }, `check the candidate of ${this.unit}`);
    return r.exitCode === 0;
  }

  // Go back to a given version and mark it known-good again (undoes a confirmation the rest of the group missed);
  // restarts without waiting for readiness.
  async rollbackTo(version: Version): Promise<void> {
    const files = await catUnit(this.host, this.unit);
    const etc = files.find((f) => f.path.endsWith(`/${DROPIN_NAME}`))?.text ?? null;
    await restoreVersion(this.host, this.unit, version, etc, {
      leased: !!this.opts.lease || hasTrial(files),
      mode: this.unitMode,
    });
    await markVersionGood(this.host, this.unit, { mode: this.unitMode });
    this.stopRenewing();
    await this.act(
      'rollback',
      `returned to ${describeRollbackTarget(version)} (the rest of the group did not confirm)`,
    );
    await this.restart(`rollback to version ${version}`);
    this.baseline = null;
  }

  // Mark what is deployed now as the last known-good version.
  // A confirmed config that is the operator's own leaves no drop-in (a copy of ExecStart would hide their edits).
  async markGood(): Promise<Version> {
    try {
      const v = await markVersionGood(this.host, this.unit, {
        leased: !!this.opts.lease,
        mode: this.unitMode,
        keepLease: this.leaseHeld,
      });
      return v !== 'none' && (await this.dropOwnCopy()) ? 'none' : v;
    } finally {
      this.stopRenewing();
    }
  }

  // Remove spectune's /etc drop-in when it restates the operator's unit (same ExecStart: no restart needed).
  private async dropOwnCopy(): Promise<boolean> {
    const files = await catUnit(this.host, this.unit);
    const isOurs = (f: UnitFile) => f.path.endsWith(`/${DROPIN_NAME}`) || f.path.endsWith(`/${TRIAL_DROPIN_NAME}`);
    const ours = files.find((f) => f.path.endsWith(`/${DROPIN_NAME}`));
    if (!ours || hasTrial(files) || !isOperatorsOwnConfig(files, ours, isOurs)) return false;
    await restoreVersion(this.host, this.unit, 'none', ours.text, { mode: this.unitMode });
    await markVersionGood(this.host, this.unit);
    this.log(
      'info',
      `${this.unit}: the confirmed config is the unit's own: spectune's drop-in removed (no restart: same ExecStart)`,
    );
    return true;
  }

  // Hold the lease from taking the host lock to releasing it (tune, apply, rollback): if spectune dies at any moment,
  // with a candidate in force or between candidates, the host's timer removes this run's lock within the lease (and
  // the candidate, when one is in force), so the next command needs no --break-lock. No-op without a lease.
  async holdLease(): Promise<void> {
    const lease = this.opts.lease;
    if (!lease || this.leaseHeld) return;
    try {
      await armLease(this.host, this.unit, lease);
    } catch (e) {
      // A host with no transient timers (manager: process): candidates keep their own lease as before.
      this.log(
        'warn',
        `${this.host.name}: no lease held around the lock of ${this.unit} (${(e as Error).message.split('\n')[0]}); a lock left by a killed run needs --break-lock`,
      );
      return;
    }
    this.leaseHeld = true;
    this.renewer ??= startRenewing(this.host, this.unit, lease, (m) => this.log('warn', m));
  }

  // End the held lease (after the lock is released): a candidate still in force (spectune could not roll it back)
  // is left to the lease, which restores known-good; otherwise the lease goes, if it is still this run's.
  async endLease(): Promise<void> {
    if (!this.leaseHeld) return;
    this.leaseHeld = false;
    this.stopRenewing();
    if (await hasTrialDropIn(this.host, this.unit)) return;
    await releaseLease(this.host, this.unit, { ownOnly: true });
  }

  // Stop renewing the lease (confirmed, rolled back, or given up); a lease the run holds is renewed until endLease.
  private stopRenewing(): void {
    if (this.leaseHeld) return;
    this.renewer?.stop();
    this.renewer = null;
  }

  // The operator's own ExecStart (spectune's drop-in left out), the one in force, and spectune's drop-in: what a
  // report needs to print the exact line to keep.
  async readExecStarts(): Promise<ExecStarts> {
    const files = await catUnit(this.host, this.unit);
    const ours = ourDropIn(files);
    const operator = effectiveListValue(
      files.filter((f) => !f.path.endsWith(`/${DROPIN_NAME}`) && !f.path.endsWith(`/${TRIAL_DROPIN_NAME}`)),
      'Service',
      'ExecStart',
    );
    const inForce = effectiveListValue(files, 'Service', 'ExecStart');
    return {
      operator: operator?.value ?? null,
      inForce: inForce?.value ?? null,
      dropIn: ours?.text ?? null,
      dropInPath: dropInPath(this.unit),
    };
  }

  // Engine settings in force (unit file plus drop-ins).
  async currentSettings(): Promise<EngineSettings> {
    return (await this.readInForce()).settings;
  }

  // Fail at once (E_CONFIG_INVALID) when the endpoint's port is not the one the ExecStart in force listens on.
  async checkEndpointPort(source: EndpointSource): Promise<void> {
    const port = (await this.currentSettings()).port;
    checkEndpointPort({
      endpoint: this.opts.endpoint,
      unit: this.unit,
      execPort: typeof port === 'number' ? port : undefined,
      defaultPort: this.adapter.defaultPort,
      source,
    });
  }

  // Emit a log event.
  private log(level: 'info' | 'warn', message: string): void {
    this.onEvent({ type: 'log', ts: Date.now(), level, message });
  }

  // Record an action (before doing it, so a crash mid-way still leaves the attribution) and emit it.
  private async act(action: string, why: string): Promise<void> {
    await this.actionLog.record({
      ts: new Date().toISOString(),
      action,
      unit: this.unit,
      by: this.opts.by ?? 'spectune',
      host: this.host.name,
      why,
    });
    this.onEvent({ type: 'service:action', ts: Date.now(), host: this.host.name, unit: this.unit, action, why });
  }

  // The unit's files, the ExecStart in force and the engine settings it means.
  private async readInForce(): Promise<{ files: UnitFile[]; execStart: string | null; settings: EngineSettings }> {
    const files = await catUnit(this.host, this.unit);
    const exec = effectiveListValue(files, 'Service', 'ExecStart');
    const settings = exec ? readSettings(exec.value, effectiveEnvironment(files), this.engine) : {};
    return { files, execStart: exec?.value ?? null, settings };
  }

  // Quiesce spectune's load and wait for the engine's in-flight requests, warning about TimeoutStopSec.
  private drainBeforeStop(state: UnitState, stop: StopOptions): Promise<DrainEstimate> {
    return prepareStop(
      {
        unit: this.unit,
        timeoutStopMs: state.timeoutStopMs,
        sleep,
        readMetrics: () => this.prober.metrics(this.opts.endpoint, this.adapter),
        warn: (m) => this.log('warn', m),
        info: (m) => this.log('info', m),
        progress: (p) => this.onEvent({ type: 'service:drain', ts: Date.now(), unit: this.unit, ...p }),
        known: { assumedOutputTokens: this.opts.drainOutputTokens },
      },
      { ...stop, maxWaitMs: this.opts.maxDrainWaitMs },
    );
  }

  // Baseline for a start spectune did not make itself: the unit as it is now.
  private async currentBaseline(): Promise<Baseline> {
    const [s, cursor, clockOffsetMs] = await Promise.all([
      showUnit(this.host, this.unit),
      lastJournalCursor(this.host, this.unit),
      measureClockOffsetMs(this.host),
    ]);
    return {
      mainPid: s.mainPid,
      nRestarts: s.nRestarts,
      cursor,
      clockOffsetMs,
      startedAt: Date.now(),
      sawStart: false,
    };
  }

  // Follow the unit from a baseline: ready (or stable when monitoring), or diagnose the failure (or the missed
  // deadline) and stop the loop or the hung start.
  private async follow(
    base: Baseline,
    mode: FollowMode,
    signal?: AbortSignal,
  ): Promise<ReadyResult | { status: 'stable' }> {
    const c = this.collab;
    const deadlineMs = 'deadlineMs' in mode ? mode.deadlineMs : undefined;
    const outcome = await watchStart(
      {
        host: this.host,
        unit: this.unit,
        healthUrl: this.healthUrl,
        readyPattern: this.adapter.readyPattern,
        isFatal: (m) => c.isFatalLine(m, this.engine),
        health: this.prober.health,
        sleep,
        now: Date.now,
        pollMs: this.opts.pollMs,
        confirmWindowMs: this.opts.confirmWindowMs,
        monitorMs: 'monitorMs' in mode ? mode.monitorMs : undefined,
        deadlineMs,
        onPoll: createProgressReporter({ unit: this.unit, onEvent: this.onEvent, now: Date.now, deadlineMs }),
      },
      base,
      signal,
    );
    if (outcome.status === 'stable') return { status: 'stable' };
    if (outcome.status === 'ready') {
      this.onEvent({ type: 'service:ready', ts: Date.now(), unit: this.unit, elapsedMs: outcome.elapsedMs });
      if (this.postReadyPending) {
        this.postReadyPending = false;
        await runHooks('postReady', this.hooks, (m) => this.log('info', `${this.unit}: ${m}`)).catch((e: unknown) =>
          this.log('warn', `${(e as Error).message}: the engine serves; run it by hand`),
        );
      }
      return { status: 'ready', elapsedMs: outcome.elapsedMs };
    }
    if (outcome.status === 'timeout') return this.failTimedOut(outcome.tracker, deadlineMs ?? outcome.elapsedMs);
    const result = await this.diagnoseFailure(outcome.tracker, outcome.reason, outcome.looping);
    const s = outcome.tracker.state;
    if (outcome.looping || s?.activeState === 'activating' || s?.subState === 'auto-restart')
      await this.stopLoop(`stop the failing start: ${result.verdict.class}`);
    return result;
  }

  // A start that missed its deadline: a coded error naming what was seen last, a diagnosis, and the hung start
  // stopped (whatever state it hangs in), so the caller's rollback starts clean.
  private async failTimedOut(t: Tracker, deadlineMs: number): Promise<FailedStart> {
    const error = new ReadyTimeoutError(this.unit, deadlineMs, readLastSeen(t));
    const result = await this.diagnoseFailure(t, error.message, false, error);
    await this.stopLoop(`stop the start that was not ready within its ${formatSeconds(deadlineMs)} deadline`);
    return { ...result, error };
  }

  // Diagnose a failed start from its journal, the kernel log, the unit state and the action log.
  private async diagnoseFailure(
    t: Tracker,
    reason: string,
    looping: boolean,
    timedOut?: ReadyTimeoutError,
  ): Promise<FailedStart> {
    const journal = renderShort(t.entries);
    let diagnosis: Diagnosis | null = null;
    try {
      const c = this.collab;
      const since = `@${Math.floor((t.baseline.startedAt + t.baseline.clockOffsetMs) / 1000)}`;
      const [kernel, actions] = await Promise.all([
        readKernelLog(this.host, since),
        this.actionLog.read({ unit: this.unit }),
      ]);
      const inputs = [
        { name: `journal:${this.unit}`, entries: t.entries },
        ...(kernel.length ? [{ name: 'kernel', entries: kernel }] : []),
      ];
      diagnosis = asCrashLoop(
        c.diagnose(inputs, { state: t.state?.raw ?? '', actions, engine: this.engine, unit: this.unit }),
        t,
        looping,
      );
    } catch (e) {
      this.log('warn', `diagnosis failed: ${(e as Error).message}`);
    }
    const found = diagnosis?.verdict ?? fallbackVerdict(t, reason, looping);
    const verdict = timedOut ? asTimeoutVerdict(found, timedOut) : found;
    if (diagnosis) diagnosis = { ...diagnosis, verdict };
    const failedAtMs = failureTimestampMs(t);
    // Journal times are the service host's: bring the verdict time onto that clock first.
    const timeToVerdictMs =
      failedAtMs === null ? null : Math.max(0, Date.now() + t.baseline.clockOffsetMs - failedAtMs);
    this.onEvent({ type: 'diagnosis', ts: Date.now(), verdict });
    this.onEvent({ type: 'service:failed', ts: Date.now(), unit: this.unit, reason, verdict });
    return { status: 'failed', reason, looping, verdict, diagnosis, timeToVerdictMs, journal };
  }
}

// A rollback into a config spectune cannot control is no rollback: refuse, naming the drop-in that overrides it.
function refuseForeignOverride(host: string, files: UnitFile[]): void {
  const o = viewUnit(files).overrides;
  if (!o.length) return;
  const paths = [...new Set(o.map((x) => x.path))];
  throw new ToolError(
    'E_FOREIGN_OVERRIDE',
    `${host}: ${paths.join(', ')} comes after spectune's drop-in and overrides ${o.map((x) => `${x.key} (in force: ${x.effective})`).join(', ')}: a rollback would not change what runs`,
    {
      hint: `move ${paths.join(' and ')} out of the way (or rename it below 90-), systemctl daemon-reload, then roll back; nothing was changed`,
    },
  );
}

// A start-up deadline must be a positive number of milliseconds (undefined: the default).
function checkReadyTimeout(ms: number | undefined): void {
  if (ms !== undefined && !(ms > 0))
    throw new ToolError('E_USAGE', `ready timeout: expected a positive duration, got ${ms} ms`, {
      hint: 'e.g. --ready-timeout 1200 (seconds)',
    });
}

// Build a controller for one unit on one host (the unit name is validated here, before anything runs).
export function createServiceController(opts: ServiceControllerOptions): ServiceController {
  return new ServiceController(opts);
}
