// Types of the service controller's API (options, results, the rollback error).
import type { Diagnosis, Verdict } from '../diagnose/index.js';
import type { EngineName, EngineSettings } from '../engines/types.js';
import { ToolError } from '../errors.js';
import type { ServiceEventSink } from './events.js';
import type { Host } from '../host/types.js';
import type { ActionLog } from './action-log.js';
import type { LeaseOptions } from './lease.js';
import type { RestartHooks } from './hooks.js';
import type { Collaborators } from './collaborators.js';
import type { Version } from './deploy.js';
import type { ReadyTimeoutError } from './start-deadline.js';
import type { HealthResult, Prober } from './health.js';
import type { UnitState } from './show.js';
import type { FileInForce, UnitView } from './unit-view.js';

/** What a controller is built from. */
export interface ServiceControllerOptions {
  host: Host;
  unit: string;
  engine: EngineName;
  /** Base URL of the engine as seen from this machine, e.g. http://10.0.0.5:30000. */
  endpoint: string;
  actionLog?: ActionLog;
  onEvent?: ServiceEventSink;
  /** Who the action log names for spectune's own actions. */
  by?: string;
  collaborators?: Collaborators;
  prober?: Prober;
  /** The engine's --api-key, sent on every health, metrics and info probe (without it a keyed engine logs 401s). */
  apiKey?: string | null;
  pollMs?: number;
  confirmWindowMs?: number;
  /** How long a restart waits for in-flight requests before it stops anyway (--drain-timeout, target.drainTimeout; default 10 min). */
  maxDrainWaitMs?: number;
  /** The operator's commands on this machine before each stop and after each ready (target.hooks). */
  hooks?: RestartHooks;
  /** Output tokens a request in flight may still produce, for the drain estimate (default ASSUMED_OUTPUT_TOKENS). */
  drainOutputTokens?: number;
  /** Commit-confirmed lease for candidates (real systemd hosts only; without it a candidate goes straight to /etc). */
  lease?: LeaseOptions;
  /** Start-up deadline of waitReady and rollback (ms after the start): neither ready nor failed by then = failed, E_TIMEOUT. Default 20 min. */
  readyTimeoutMs?: number;
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
  /** Every file in force in systemd's order, spectune's among them, later drop-ins overriding spectune's keys, the ExecStart diff. */
  view: UnitView;
}

/** One rank as it is now: versions, whether it runs known-good (no candidate in force, current = good), its state. */
export interface RankLook {
  host: string;
  unit: string;
  current: Version | null;
  good: Version | null;
  onGood: boolean;
  state: UnitState;
}

/** A unit's launch commands: the operator's own ExecStart, the one in force, spectune's drop-in (null when absent). */
export interface ExecStarts {
  operator: string | null;
  inForce: string | null;
  dropIn: string | null;
  dropInPath: string;
}

/** The outcome of waiting for a start. */
export type ReadyResult =
  | { status: 'ready'; elapsedMs: number }
  | {
      status: 'failed';
      reason: string;
      looping: boolean;
      verdict: Verdict;
      diagnosis: Diagnosis | null;
      timeToVerdictMs: number | null;
      journal: string;
      /** Set when the start missed its deadline (E_TIMEOUT, naming the last state, health answer and journal line). */
      error?: ReadyTimeoutError;
    };

/** The outcome of a successful rollback. */
/** What a rollback would do: the version it returns to and the drop-in change, or why there is nothing to do. */
export interface RollbackPlan {
  unit: string;
  /** The known-good version it returns to ('none': the operator's unit alone). */
  version: Version;
  /** Set when a rollback would change nothing: spectune never deployed to this unit, or it already runs the operator's config. */
  nothing: string | null;
  /** spectune's drop-in file, its text now and after the rollback (null: absent). */
  dropInPath: string;
  dropInNow: string | null;
  dropInAfter: string | null;
  /** Commands a rollback runs, in order. */
  steps: string[];
  /** The files in force now, in systemd's order. */
  filesInForce: FileInForce[];
}

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

/** The failed branch of ReadyResult. */
export type FailedStart = Extract<ReadyResult, { status: 'failed' }>;
