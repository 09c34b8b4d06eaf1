// The engine adapter interface: each engine (sglang, vllm, llamacpp) is data plus pure functions behind it.

/** Names of the supported engines; the registry in engines/index.ts is keyed by these. */
export type EngineName = 'sglang' | 'vllm' | 'llamacpp';

/** A value of one engine setting; null removes the flag. */
export type ParamValue = string | number | boolean;

/** One tunable engine parameter, under spectune's canonical (snake_case) key. */
export interface ParamSpec {
  /** Canonical key, e.g. "speculative_num_steps". */
  key: string;
  /** The engine's own flag, e.g. "--speculative-num-steps". */
  flag: string;
  /** Other spellings the engine accepts for the same setting. */
  aliases?: string[];
  type: 'int' | 'float' | 'string' | 'bool' | 'enum';
  min?: number;
  max?: number;
  values?: string[];
  description: string;
}

/** Settings read from a launch command, keyed by canonical key. */
export type EngineSettings = Record<string, ParamValue>;

/** Capacity facts an engine logs at start-up (SGLang's capacity line, vLLM's KV cache line, ...). */
export interface CapacityFacts {
  /** The engine's info says it is simulated (spectune sim's /server_info: `simulated: true`). */
  simulated?: boolean;
  maxTotalNumTokens?: number;
  maxRunningRequests?: number;
  contextLen?: number;
  availableGpuMemGb?: number;
  /** vLLM: "Maximum concurrency for N tokens per request: X" (requests at full length). */
  maxConcurrency?: number;
  /** vLLM V0: "# GPU blocks: N". */
  gpuBlocks?: number;
}

/** What an engine reports about itself at runtime (metrics endpoints), normalised. */
export interface EngineMetrics {
  acceptLength: number | null;
  runningRequests: number | null;
  queuedRequests: number | null;
  kvUsage: number | null;
  genThroughput: number | null;
  maxRunningRequests: number | null;
  /** Accepted draft tokens / drafted tokens (bonus token excluded), when the engine reports it. */
  acceptRate?: number | null;
}

/** A problem found in an argv: removed flags, bad values, flags that do nothing on their own. */
export interface ArgvProblem {
  severity: 'error' | 'warning';
  flag: string;
  message: string;
  /** The flag to use instead, when the problem is a removed or renamed flag. */
  replacement?: string;
}

/** How a benchmark of this engine starts every level from the same prefix-cache state (the bench's CachePolicy). */
export interface EngineCachePolicy {
  /** Fields added to every request body (llama.cpp `cache_prompt: false`). */
  requestFields?: Record<string, string | number | boolean>;
  /** The engine's endpoint that empties its prefix cache, called before each measured level. */
  resetEndpoint?: { method: 'POST'; path: string };
  /** A random prefix unique to the run and the request on every prompt. */
  uniquePrefix: boolean;
  /** One line for bench --json and the report. */
  description: string;
}

/** One place an engine reports its version over HTTP: a GET path and the JSON field holding it. */
export interface VersionProbe {
  path: string;
  field: string;
}

/** One way a launch command starts an engine: `python -m <module>`, or a program (matched on its base name) followed
 *  by fixed words (`serve`, `sim`). The words are skipped before the engine's own flags. */
export type EngineInvocation = { pythonModule: string } | { program: RegExp; args?: readonly (string | RegExp)[] };

/** The engine-neutral figures the bench reads from /metrics (bench/prometheus.ts summarizeEngineView). */
export type EngineViewMetric =
  | 'runningRequests'
  | 'queuedRequests'
  | 'kvUsage'
  | 'specAcceptLength'
  | 'specAcceptRate'
  | 'specDraftsTotal'
  | 'specAcceptedTotal'
  | 'specDraftTokensTotal'
  | 'generationTokensTotal'
  | 'genThroughput';

/** What init knows of a unit when it proposes a search space: the settings in force and whether speculation is on. */
export interface SpaceInput {
  settings: EngineSettings;
  speculativeEnabled: boolean;
}

/** A dimension init proposes: the config key, a range or the values to try, and the comment lines that explain it. */
export type SpaceDimension = {
  key: string;
  value: { min: number; max: number } | { values: (number | string)[] };
  why: string[];
};

/** How the engine's own log lines start, so diagnose can strip the prefix and tell the dialect. */
export interface LogDialect {
  /** The record head (level, timestamp, source); group 1 is the engine's own timestamp text. */
  head?: RegExp;
  /** A process tag in front of the head ("(EngineCore_DP0 pid=212) "); group 1 is the tag. A tagged line
   *  is the engine's even when the head does not follow, unless foreignTag matches the tag. */
  processTag?: RegExp;
  /** Tags the processTag pattern also matches that belong to no engine (Ray's raylet). */
  foreignTag?: RegExp;
  /** Line starts that betray the engine although it prints no prefix (llama.cpp's function names). */
  hint?: RegExp;
  /** Every prefixed line starts a new record (SGLang); otherwise a line with the same head continues it (vLLM). */
  prefixStartsRecord?: boolean;
  /** uvicorn's "Application startup complete." is not readiness: the engine warms up after it (SGLang). */
  uvicornStartupNotReady?: boolean;
  /** The engine sends its own warm-up request before it says ready; that request is not the operator's. */
  ownWarmupRequest?: boolean;
  /** Said of a clean stop that systemd reports as killed by signal 9 (the engine SIGKILLs its own tree). */
  cleanStopSigkillNote?: string;
}

/** A multi-node launch where only this unit runs the engine; its peers run no engine command. */
export interface HeadNode {
  peers: string[];
  note: string;
}

/** How an engine's launch line spans nodes (onboard/group.ts). */
export interface MultiNode {
  /** Every node runs the engine with --nnodes/--node-rank; these flags name the init address (the first in
   *  summaries), and portFlag its port when separate. */
  rankFlags?: { addrFlags: string[]; portFlag?: string };
  /** Only this unit runs the engine (Ray workers, rpc-server peers): what that means, from the resolved argv. */
  readHeadNode?(argv: readonly string[]): HeadNode | null;
}

/** Everything spectune knows about one engine. */
export interface EngineAdapter {
  name: EngineName;
  /** The engine's name in prose (diagnosis summaries). */
  displayName: string;
  /** How a launch command starts it (binary detection in locate.ts, the words skipped before its flags). */
  invocations: readonly EngineInvocation[];
  /** Prefix of the environment variables the engine reads flags from (llama-server LLAMA_ARG_CTX_SIZE for
   *  --ctx-size), when it has that convention. */
  flagEnvPrefix?: string;
  /** The requests served at once when the command names no cap, where the engine's default is small
   *  (llama-server: one slot); absent when it is large. */
  defaultMaxRequests?: number;
  /** The search space `spectune init` proposes for a unit of this engine. */
  proposeSpace(unit: SpaceInput): SpaceDimension[];
  /** How its launch line spans nodes, when it can. */
  multiNode?: MultiNode;
  /** Its log prefix (diagnose/prefix.ts). */
  logDialect: LogDialect;
  /** Its Prometheus metric names for each engine-neutral figure, the first name exported wins (names across versions). */
  metricNames: Partial<Record<EngineViewMetric, readonly string[]>>;
  /** Tunable parameters with valid ranges. */
  params: ParamSpec[];
  /** The port the engine listens on when its command line names none. */
  defaultPort: number;
  /** The setting (canonical key) that names the model served. */
  modelKey: string;
  /** The setting that caps the requests served at once (running requests, sequences, slots). */
  maxRequestsKey: string;
  /** Path that answers 200 when the server is ready. */
  healthPath: string;
  /** Path of the engine's Prometheus metrics (text exposition). */
  metricsPath: string;
  /** Paths of the engine's JSON self-description, tried in order (SGLang /server_info, older /get_server_info);
   *  empty when the engine has none, so nothing asks it. parseMetrics and readInfoCapacity read its body. */
  infoPaths: string[];
  /** Where the engine reports its version over HTTP, tried in order. */
  versionProbes: VersionProbe[];
  /** A GET its --api-key protects (answers 401 without the key), to check the key spectune sends. */
  authProbePath: string;
  /** How every measured level starts from the same prefix-cache state on this engine. */
  cachePolicy: EngineCachePolicy;
  /** A log line that means "ready to serve". */
  readyPattern: RegExp;
  /** Read the settings in force from an argv (the engine's own argv, after any wrapper). */
  readSettings(argv: string[]): EngineSettings;
  /** Change, add (value) or remove (null) settings in an argv, leaving every other token as it was. */
  patchArgv(argv: string[], changes: Record<string, ParamValue | null>): string[];
  /** Apply the engine's own derivation rules (e.g. SGLang draft tokens = steps + 1 at topk 1). */
  effectiveSettings(settings: EngineSettings): EngineSettings;
  /** Parse capacity facts out of one log line, or null. */
  parseCapacity(line: string): CapacityFacts | null;
  /** Capacity facts in the engine's info JSON (from infoPaths), or null. */
  readInfoCapacity(info: unknown): CapacityFacts | null;
  /** Normalise the engine's metrics (Prometheus text and/or server-info JSON). */
  parseMetrics(prometheus: string | null, serverInfo: unknown | null): EngineMetrics;
  /** Removed flags (errors naming the replacement), values out of range, flags that do nothing alone. */
  validateArgv(argv: string[]): ArgvProblem[];
}
