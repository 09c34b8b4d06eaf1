// Shared types of the diagnosis engine: classes, verdicts, evidence, rules as data.
import type { EngineName } from '../engines/types.js';

/**
 * Stable diagnosis class ids (never rename: stored in campaigns and printed in --json). `healthy` (running and
 * ready, no crash in the window) and `starting` (started, not ready yet, no crash so far) are the no-failure
 * verdicts of a process still running at the end of the input; both have `crashed: false`.
 */
export type DiagnosisClass =
  | 'kv_cache_oom'
  | 'cuda_oom'
  | 'cuda_graph_capture_failure'
  | 'host_oom_kill'
  | 'stop_timeout'
  | 'crash_loop'
  | 'distributed_error'
  | 'port_in_use'
  | 'bad_config'
  | 'model_load_error'
  | 'speculative_error'
  | 'cuda_error'
  | 'external_kill'
  | 'clean_stop'
  | 'healthy'
  | 'starting'
  | 'unknown'
  | 'disk_full'
  | 'tokenizer_error'
  | 'dependency_error';

/** How sure the verdict is; "high" requires a matching evidence line. */
export type Confidence = 'high' | 'medium' | 'low';

/** One input line quoted as evidence (1-based line number in the combined input, and its source file). */
export interface EvidenceLine {
  line: number;
  text: string;
  source?: string;
  /** The host of the line, when the diagnosis read a group of ranks. */
  host?: string;
  /** The rank of the line (0 = rank0, the endpoint), when the diagnosis read a group of ranks. */
  rank?: number;
}

/** A worker's end linked to the rank that ended before it ("rank 1 aborted because rank 0 was stopped"). */
export interface RankLink {
  rank: number;
  host: string;
  class: DiagnosisClass;
  becauseRank: number;
  becauseHost: string;
  becauseClass: DiagnosisClass;
  /** Seconds between the two ends. */
  afterSec: number;
  text: string;
}

/** One rank's own verdict in a group diagnosis. */
export interface RankSummary {
  rank: number;
  host: string;
  unit: string;
  class: DiagnosisClass;
  cause: DiagnosisClass | null;
  summary: string;
}

/** A concrete change the operator (or the tuner) can make. */
export interface Remediation {
  text: string;
  /** Engine-neutral canonical setting key to change, e.g. "mem_fraction_static". */
  setting?: string;
  /** Direction or value for the tuner. */
  direction?: 'increase' | 'decrease' | 'remove' | 'set';
  value?: string | number | boolean;
  /** A systemd directive to change, e.g. "TimeoutStopSec". */
  unitDirective?: string;
}

/** The verdict of a diagnosis. */
export interface Verdict {
  class: DiagnosisClass;
  /** For crash_loop: what each start dies of; otherwise null. */
  cause: DiagnosisClass | null;
  confidence: Confidence;
  summary: string;
  evidence: EvidenceLine[];
  ruledOut: { class: DiagnosisClass; why: string }[];
  remediation: Remediation[];
  /** False when the input shows no failure at all (healthy start-up, clean stop); true for a crash verdict. */
  crashed?: boolean;
  /** Facts extracted from evidence (named groups, counts), e.g. {"remaining_requests": 16}. */
  facts?: Record<string, string | number>;
  /**
   * Finer stable id of the cause within the class (the decisive rule's `detail`), e.g. "nccl_timeout" or
   * "illegal_memory_access"; null when the rule names none. Ids are listed in docs/diagnose-classes.md.
   */
  detail?: string | null;
  /** What the input lacked, in words ("no timestamps: no timeline"); empty when nothing was missing. */
  missing?: string[];
  /** What to collect next to close those gaps: exact commands. */
  collect?: string[];
  /** A group's workers' aborts linked to the rank that ended first, and its cause. */
  links?: RankLink[];
}

/** One frame of a Python traceback. */
export interface TraceFrame {
  file: string;
  line: number;
  func: string;
  code?: string;
}

/** The root exception of a (possibly chained) traceback. */
export interface RootException {
  type: string;
  message: string;
  frames: TraceFrame[];
}

/** One entry of the reconstructed timeline. */
export interface TimelineEntry {
  ts: string | null;
  line: number;
  pid: number | null;
  kind: string;
  text: string;
}

/** One process lifetime (between start and exit of a main PID). */
export interface Lifetime {
  pid: number | null;
  firstLine: number;
  lastLine: number;
  start: string | null;
  end: string | null;
  ready: boolean;
  requestsServed: number;
  exit: string | null;
  /** Input file the lifetime was read from (several files = several nodes). */
  source?: string;
  /** What this lifetime died of, when it died of something. */
  cause?: DiagnosisClass | null;
}

/** The full result of `spectune diagnose`. */
export interface Diagnosis {
  verdict: Verdict;
  rootException: RootException | null;
  timeline: TimelineEntry[];
  lifetimes: Lifetime[];
  /** What was read per input: line counts by format (proof that no line was dropped). */
  inputs?: InputSummary[];
  /** A group of ranks: each rank's own verdict. */
  ranks?: RankSummary[];
}

/** Lines read from one input, by recognised format. */
export interface InputSummary {
  name: string;
  lines: number;
  /** Lines recognised as journal entries, engine output or systemd/kernel lines. */
  recognised: number;
  formats: { json: number; journal: number; plain: number; meta: number };
}

/** A diagnosis rule, kept as data (one file per family under diagnose/rules/). */
export interface DiagnosisRule {
  id: string;
  class: DiagnosisClass;
  title: string;
  /** Engines whose dialect this rule applies to; omitted = all. */
  engines?: EngineName[];
  /** Regexes over messages; named groups become facts. */
  patterns: RegExp[];
  confidence: Confidence;
  /** Operator-facing hint and structured nudges for the tuner. */
  remediation: Remediation[];
  /** False for context rules (clean-stop markers, hints) that must not fail a start-up watcher; default true. */
  fatal?: boolean;
  /** Classes this rule sharpens when both hit in one lifetime (e.g. an OOM inside `capture_model`). */
  refines?: DiagnosisClass[];
  /** Finer stable id of the cause within the class (becomes `verdict.detail`), e.g. "nccl_timeout". */
  detail?: string;
  /** Added to the class rank when several failures compete (a GPU the engine cannot run on outranks any flag). */
  priority?: number;
  /** Lines that end what this (context) rule says, e.g. "capture finished" ends "capture in progress": its hits are dropped. */
  clearedBy?: RegExp[];
}

/** One line of the action log (JSON lines) that lets diagnose attribute a SIGTERM to whoever stopped the unit. */
export interface ActionRecord {
  /** ISO-8601 time of the action. */
  ts: string;
  action: 'stop' | 'start' | 'restart' | 'kill' | 'daemon-reload' | 'deploy' | 'rollback' | string;
  unit: string;
  /** Who: "operator", "spectune", a user name. */
  by: string;
  host?: string;
  why?: string;
}
