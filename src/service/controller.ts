// The service controller: plan, deploy, restart safely, wait for readiness failing fast, stop crash loops and
// roll back, recording every action. This is the library API the tuner and the CLI commands use.
import type { Diagnosis, Verdict } from '../diagnose/types.js';
import { getEngine } from '../engines/registry.js';
import type { EngineName, EngineSettings } from '../engines/types.js';
import { ToolError } from '../errors.js';
import { ignoreEvents, type EventSink } from '../events.js';
import type { Host } from '../host/types.js';
import { createMemoryActionLog, type ActionLog } from './action-log.js';
import { loadCollaborators, type Collaborators } from './collaborators.js';
import { asCrashLoop, failureTimestampMs, fallbackVerdict } from './crash-loop.js';
import { applyDeploy, markVersionGood, readVersions, restoreVersion, type Version } from './deploy.js';
import { httpProber, joinUrl, type HealthResult, type Prober } from './health.js';
import { renderShort } from './journal.js';
import { planDeploy, readSettings, type Changes, type DeployPlan } from './plan.js';
import { watchStart, type Baseline, type Tracker } from './readiness.js';
import { prepareStop, type DrainEstimate } from './safe-stop.js';
import type { UnitState } from './show.js';
import { catUnit, controlUnit, lastJournalCursor, readKernelLog, showUnit } from './systemd.js';
import { DROPIN_NAME, effectiveEnvironment, effectiveListValue, normalizeUnitName } from './unit.js';

/** What a controller is built from. */
export interface ServiceControllerOptions {
  host: Host;
  unit: string;
  engine: EngineName;
  /** Base URL of the engine as seen from this machine, e.g. http://10.0.0.5:30000. */
  endpoint: string;
  actionLog?: ActionLog;
  onEvent?: EventSink;
  /** Who the action log names for spectune's own actions. */
  by?: string;
  collaborators?: Collaborators;
  prober?: Prober;
  pollMs?: number;
  confirmWindowMs?: number;
  maxDrainWaitMs?: number;
}

/** `spectune status` data. */
export interface ServiceStatus {
  host: string;
  unit: string;
  state: UnitState;
  execStart: string | null;
  settings: EngineSettings;
  dropIn: boolean;
  versions: { current: Version | null; good: Version | null };
  health: HealthResult;
}

/** The outcome of waiting for a start. */
export type ReadyResult =
  | { status: 'ready'; elapsedMs: number }
  | { status: 'failed'; reason: string; looping: boolean; verdict: Verdict; diagnosis: Diagnosis | null; timeToVerdictMs: number | null; journal: string };

/** The outcome of a successful rollback. */
export interface RollbackResult {
  status: 'rolled_back';
  version: Version;
  elapsedMs: number;
}

/** Rollback failed too: the service is down; carries the verdict of the failed rollback start. */
export class RollbackFailedError extends ToolError {
  readonly verdict: Verdict | null;
  constructor(message: string, verdict: Verdict | null) {
    super('E_ROLLBACK_FAILED', message, { hint: 'the service is stopped; check `spectune logs` and the unit by hand' });
    this.verdict = verdict;
  }
}

/** Options of a stop or restart. */
export interface StopOptions {
  /** Finish or cancel spectune's own load first (resolves when it is done). */
  quiesce?: () => Promise<void>;
  signal?: AbortSignal;
}

/** How long checkLoop watches a running unit: several RestartSec periods and a start-up of a fast-failing engine. */
const LOOP_CHECK_MS = 10_000;

// Sleep that an abort ends early.
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
  });
}

// Build a controller for one unit on one host.
export function createServiceController(opts: ServiceControllerOptions) {
  const unit = normalizeUnitName(opts.unit);
  const { host, engine } = opts;
  const onEvent = opts.onEvent ?? ignoreEvents;
  const actionLog = opts.actionLog ?? createMemoryActionLog();
  const prober = opts.prober ?? httpProber;
  let collab: Promise<Collaborators> | null = opts.collaborators ? Promise.resolve(opts.collaborators) : null;
  const deps = () => (collab ??= loadCollaborators());
  let baseline: Baseline | null = null;

  const log = (level: 'info' | 'warn', message: string) => onEvent({ type: 'log', ts: Date.now(), level, message });
  const adapter = getEngine(engine);
  const healthUrl = joinUrl(opts.endpoint, adapter.healthPath);

  // Record an action (before doing it, so a crash mid-way still leaves the attribution) and emit it.
  async function act(action: string, why: string): Promise<void> {
    await actionLog.record({ ts: new Date().toISOString(), action, unit, by: opts.by ?? 'spectune', host: host.name, why });
    onEvent({ type: 'service:action', ts: Date.now(), host: host.name, unit, action, why });
  }

  // The unit's files, the ExecStart in force and the engine settings it means.
  async function readInForce() {
    const files = await catUnit(host, unit);
    const exec = effectiveListValue(files, 'Service', 'ExecStart');
    const settings = exec ? readSettings(exec.value, effectiveEnvironment(files), engine) : {};
    return { files, execStart: exec?.value ?? null, settings };
  }

  // Safe (re)start: quiesce and drain when the unit is up, then restart, keeping the baseline for waitReady.
  async function restart(why: string, stop: StopOptions = {}): Promise<DrainEstimate | null> {
    const state = await showUnit(host, unit);
    let drain: DrainEstimate | null = null;
    if (state.activeState === 'active') drain = await drainBeforeStop(state, stop);
    const cursor = await lastJournalCursor(host, unit);
    await act('restart', why);
    const startedAt = Date.now();
    await controlUnit(host, 'restart', unit);
    const after = await showUnit(host, unit);
    baseline = { mainPid: after.mainPid, nRestarts: after.nRestarts, cursor, startedAt, sawStart: true };
    return drain;
  }

  // Quiesce spectune's load and wait for the engine's in-flight requests, warning about TimeoutStopSec.
  async function drainBeforeStop(state: UnitState, stop: StopOptions): Promise<DrainEstimate> {
    return prepareStop({
      unit, timeoutStopMs: state.timeoutStopMs, sleep,
      readMetrics: () => prober.metrics(opts.endpoint, adapter),
      warn: (m) => log('warn', m), info: (m) => log('info', m),
    }, { ...stop, maxWaitMs: opts.maxDrainWaitMs });
  }

  // Diagnose a failed start from its journal, the kernel log, the unit state and the action log.
  async function diagnoseFailure(t: Tracker, reason: string, looping: boolean): Promise<Extract<ReadyResult, { status: 'failed' }>> {
    const journal = renderShort(t.entries);
    let diagnosis: Diagnosis | null = null;
    try {
      const c = await deps();
      const since = `@${Math.floor(t.baseline.startedAt / 1000)}`;
      const [kernel, actions] = await Promise.all([readKernelLog(host, since), actionLog.read({ unit })]);
      const inputs = [{ name: `journal:${unit}`, text: journal }, ...(kernel ? [{ name: 'kernel', text: kernel }] : [])];
      diagnosis = asCrashLoop(c.diagnose(inputs, { state: t.state?.raw ?? '', actions, engine, unit }), t, looping);
    } catch (e) {
      log('warn', `diagnosis failed: ${(e as Error).message}`);
    }
    const verdict = diagnosis?.verdict ?? fallbackVerdict(t, reason, looping);
    const failedAtMs = failureTimestampMs(t);
    const timeToVerdictMs = failedAtMs === null ? null : Math.max(0, Date.now() - failedAtMs);
    onEvent({ type: 'diagnosis', ts: Date.now(), verdict });
    onEvent({ type: 'service:failed', ts: Date.now(), unit, reason, verdict });
    return { status: 'failed', reason, looping, verdict, diagnosis, timeToVerdictMs, journal };
  }

  // Follow the unit from a baseline: ready (or stable when monitoring), or diagnose the failure and stop the loop.
  async function follow(base: Baseline, monitorMs: number | undefined, signal?: AbortSignal): Promise<ReadyResult | { status: 'stable' }> {
    const c = await deps();
    const outcome = await watchStart({
      host, unit, healthUrl, readyPattern: adapter.readyPattern,
      isFatal: (m) => c.isFatalLine(m, engine), health: prober.health, sleep, now: Date.now,
      pollMs: opts.pollMs, confirmWindowMs: opts.confirmWindowMs, monitorMs,
    }, base, signal);
    if (outcome.status === 'stable') return { status: 'stable' };
    if (outcome.status === 'ready') {
      onEvent({ type: 'service:ready', ts: Date.now(), unit, elapsedMs: outcome.elapsedMs });
      return { status: 'ready', elapsedMs: outcome.elapsedMs };
    }
    const result = await diagnoseFailure(outcome.tracker, outcome.reason, outcome.looping);
    const s = outcome.tracker.state;
    if (outcome.looping || s?.activeState === 'activating' || s?.subState === 'auto-restart') await stopLoop(`stop the failing start: ${result.verdict.class}`);
    return result;
  }

  // Wait for the last start to be ready, or diagnose its failure and stop a crash loop.
  async function waitReady(w: { signal?: AbortSignal } = {}): Promise<ReadyResult> {
    const base = baseline ?? await currentBaseline();
    baseline = null;
    return (await follow(base, undefined, w.signal)) as ReadyResult;
  }

  // Watch a running unit for a while: a crash loop (even one `systemctl status` shows as active) is diagnosed and stopped.
  async function checkLoop(w: { windowMs?: number; signal?: AbortSignal } = {}): Promise<{ status: 'stable' } | Extract<ReadyResult, { status: 'failed' }>> {
    const base = await currentBaseline();
    if (!base.mainPid && (await showUnit(host, unit)).activeState !== 'activating') return { status: 'stable' };
    const r = await follow(base, w.windowMs ?? LOOP_CHECK_MS, w.signal);
    return r.status === 'ready' ? { status: 'stable' } : r;
  }

  // Baseline for a start spectune did not make itself: the unit as it is now.
  async function currentBaseline(): Promise<Baseline> {
    const s = await showUnit(host, unit);
    return { mainPid: s.mainPid, nRestarts: s.nRestarts, cursor: await lastJournalCursor(host, unit), startedAt: Date.now(), sawStart: false };
  }

  // Stop a crash loop (or a failed start): systemctl stop, then reset-failed so the next start is clean.
  async function stopLoop(why = 'stop the crash loop'): Promise<void> {
    await act('stop', why);
    await controlUnit(host, 'stop', unit);
    await controlUnit(host, 'reset-failed', unit);
  }

  return {
    unit, host, engine,
    // Unit state, engine settings in force, health.
    async status(): Promise<ServiceStatus> {
      const [state, inForce, versions] = await Promise.all([showUnit(host, unit), readInForce(), readVersions(host, unit)]);
      const dropIn = inForce.files.some((f) => f.path.endsWith(`/${DROPIN_NAME}`));
      return { host: host.name, unit, state, execStart: inForce.execStart, settings: inForce.settings, dropIn, versions, health: await prober.health(healthUrl) };
    },
    // Plan a deploy of engine changes on top of what is in force (pure once the unit is read).
    async plan(changes: Changes, p: { environment?: Record<string, string | null>; timeoutStopSec?: number | null } = {}): Promise<DeployPlan> {
      const files = await catUnit(host, unit);
      return planDeploy(files[0].text, files.slice(1), engine, changes, { unit, unitPath: files[0].path, ...p });
    },
    // Deploy a plan and restart safely; follow with waitReady().
    async apply(plan: DeployPlan, stop: StopOptions = {}): Promise<{ version: number; drain: DrainEstimate | null }> {
      const { execStart } = await readInForce();
      if (execStart !== plan.currentExecStart) {
        throw new ToolError('E_INPUT_UNUSABLE', `${unit} changed since the plan was made`, { hint: 'plan again' });
      }
      const before = await readVersions(host, unit);
      const version = await applyDeploy(plan, host, onEvent);
      await act('deploy', `drop-in version ${version} with ${JSON.stringify(plan.changes)}`);
      try {
        return { version, drain: await restart(`apply ${JSON.stringify(plan.changes)}`, stop) };
      } catch (e) {
        await restoreVersion(host, unit, before.current ?? 'none', plan.dropInText).catch(() => {});
        throw e;
      }
    },
    waitReady,
    checkLoop,
    restart,
    stopLoop,
    // Return to the last known-good drop-in (or none), restart and verify readiness.
    async rollback(w: StopOptions = {}): Promise<RollbackResult> {
      const { good } = await readVersions(host, unit);
      const target: Version = good ?? 'none';
      const files = await catUnit(host, unit);
      await restoreVersion(host, unit, target, files.find((f) => f.path.endsWith(`/${DROPIN_NAME}`))?.text ?? null);
      await act('rollback', `returned to known-good version ${target}`);
      await restart(`rollback to version ${target}`, w);
      const r = await waitReady(w);
      if (r.status === 'ready') return { status: 'rolled_back', version: target, elapsedMs: r.elapsedMs };
      throw new RollbackFailedError(`${host.name}: rollback of ${unit} to version ${target} failed too: ${r.verdict.summary}`, r.verdict);
    },
    // Mark what is deployed now as the last known-good version.
    markGood: () => markVersionGood(host, unit),
    // Engine settings in force (unit file plus drop-ins).
    currentSettings: async (): Promise<EngineSettings> => (await readInForce()).settings,
  };
}

/** The controller's type. */
export type ServiceController = ReturnType<typeof createServiceController>;
