// Shared shapes of `spectune init` (what was found on a host) and `spectune doctor` (what each check concluded).
import type { EngineName, EngineSettings, ParamValue } from '../engines/types.js';

/** Where an engine runs: a systemd unit (tunable) or a docker container (listed, not tunable). */
export type UnitSource = 'systemd' | 'docker';

/** One engine service found on a host, with what its launch command says. */
export interface EngineUnit {
  /** systemd unit name, or the container name for docker. */
  unit: string;
  source: UnitSource;
  engine: EngineName;
  /** The launch command as written (ExecStart value, or the container's command). */
  command: string;
  /** Model path or id from the command (null when it only comes from a variable nobody can see). */
  model: string | null;
  /** Listen port from the command, else the engine's default. */
  port: number;
  portIsDefault: boolean;
  /** Effective engine settings (the adapter's derivation rules applied). */
  settings: EngineSettings;
  /** The speculative settings in force (subset of settings). */
  speculative: Record<string, ParamValue>;
  speculativeEnabled: boolean;
  /** The command carries an API key (never copied anywhere; only its presence). */
  apiKeySet: boolean;
  /** Multi-node: total nodes, this unit's rank and the init address, when the command says (SGLang, vLLM). */
  nodes: { count: number; rank: number; initAddr?: string | null; flags?: string } | null;
  /** Multi-node where only this unit runs the engine (vLLM over Ray, llama.cpp --rpc): what that means for tuning. */
  headNote?: string | null;
  /** Problems the adapter found (removed flags, -md without --spec-type, variables it cannot resolve). */
  warnings: string[];
  /** docker: compose project/service when labelled. */
  compose?: string;
}

/** A start-up measured from the journal: systemd's start line to the engine's ready line. */
export interface StartupTime {
  /** Epoch microseconds (host clock) of the start and the ready line. */
  startUs: number;
  readyUs: number;
  seconds: number;
  /** The ready line itself (evidence). */
  readyLine: string;
}

/** What the journal says about start-ups: the last complete one, the longest, and whether one is in progress. */
export interface StartupReading {
  last: StartupTime | null;
  longest: StartupTime | null;
  starts: number;
  /** The newest start has no ready line yet. */
  pending: boolean;
}

/** Outcome of one preflight check. SKIP: not run because an earlier check it needs failed. */
export type CheckStatus = 'PASS' | 'WARN' | 'FAIL' | 'SKIP';

/** One preflight check's verdict, with the fix when it is not PASS. */
export interface CheckResult {
  /** Stable id: ssh, systemctl, journal, dropin, engine, stop-timeout, startup, store-disk, clock-skew. */
  id: string;
  /** What it was checked on ("th1 sglang-qwen.service", "this machine"). */
  subject: string;
  status: CheckStatus;
  summary: string;
  fix: string | null;
  /** Figures behind the verdict (seconds, bytes, ...), for --json. */
  facts?: Record<string, unknown>;
}
