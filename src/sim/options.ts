// From parsed flags to everything one simulated launch needs: settings, faults, time scale, network (pure).
import type { ParsedArgs } from './argv.js';
import type { SimFaults, SimProfile } from './profile.js';
import { resolveSettings, resolveSpeculative, type SettingsInput, type SimSettings } from './settings.js';

/** SGLang's default --decode-log-interval: one Decode batch line per 40 decode steps. */
export const DEFAULT_DECODE_LOG_INTERVAL = 40;
/** SGLang's defaults for the network and watchdog. */
const DEFAULTS = { host: '127.0.0.1', port: 30000, watchdogTimeoutS: 300 } as const;

/** One fully resolved simulated launch. */
export interface LaunchPlan {
  settings: SimSettings;
  /** True when SGLang would log the draft-token adjustment warning. */
  draftTokensAdjusted: boolean;
  faults: SimFaults;
  timeScale: number;
  host: string;
  port: number;
  modelPath: string;
  servedModelName: string;
  apiKey: string | null;
  nodeRank: number;
  distInitAddr: string | null;
  decodeLogInterval: number;
  watchdogTimeoutS: number;
  skipWarmup: boolean;
  holdMemory: boolean;
  seed: number;
  /** ServerArgs fields for the start-up dump and /server_info (api_key masked). */
  serverArgs: Record<string, unknown>;
}

// Parse `--sim-fault crash-after=N` style values into faults; returns an error text for a bad one.
export function parseFaults(
  values: string[],
  base: SimFaults = {},
): { ok: true; faults: SimFaults } | { ok: false; error: string } {
  const keys: Record<string, keyof SimFaults> = {
    'crash-after': 'crash_after',
    'cuda-oom-batch': 'cuda_oom_batch',
    'hang-after': 'hang_after',
  };
  const faults: SimFaults = { ...base };
  for (const v of values) {
    const m = /^([a-z-]+)=(\d+)$/.exec(v);
    const key = m ? keys[m[1]] : undefined;
    if (!m || !key || Number(m[2]) < 1) {
      return {
        ok: false,
        error: `argument --sim-fault: invalid value: '${v}' (expected one of ${Object.keys(keys)
          .map((k) => `${k}=N`)
          .join(', ')})`,
      };
    }
    faults[key] = Number(m[2]);
  }
  return { ok: true, faults };
}

// Read the time scale: the flag wins over SPECTUNE_SIM_TIME_SCALE; 1 is real time.
export function readTimeScale(args: ParsedArgs, env: NodeJS.ProcessEnv): number | { error: string } {
  const raw = args.sim_time_scale ?? env.SPECTUNE_SIM_TIME_SCALE;
  if (raw === undefined || raw === '') return 1;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0)
    return { error: `argument --sim-time-scale: must be a positive number, got '${raw}'` };
  return n;
}

// Pick the SettingsInput keys out of the parsed flags.
function pickSettingsInput(args: ParsedArgs): SettingsInput {
  const keys: (keyof SettingsInput)[] = [
    'tp_size',
    'nnodes',
    'mem_fraction_static',
    'cuda_graph_max_bs',
    'disable_cuda_graph',
    'max_running_requests',
    'max_total_tokens',
    'context_length',
    'chunked_prefill_size',
    'page_size',
    'speculative_algorithm',
    'speculative_num_steps',
    'speculative_eagle_topk',
    'speculative_num_draft_tokens',
  ];
  const out: Record<string, unknown> = {};
  for (const k of keys) if (args[k] !== undefined) out[k] = args[k];
  return out as SettingsInput;
}

// Build the launch plan; returns an argparse-style error text for values SGLang would reject.
export function planLaunch(
  profile: SimProfile,
  args: ParsedArgs,
  env: NodeJS.ProcessEnv,
): { ok: true; plan: LaunchPlan } | { ok: false; error: string } {
  const timeScale = readTimeScale(args, env);
  if (typeof timeScale === 'object') return { ok: false, error: timeScale.error };
  const faults = parseFaults((args.sim_fault as string[] | undefined) ?? [], profile.faults);
  if (!faults.ok) return faults;
  const input = pickSettingsInput(args);
  const algo = input.speculative_algorithm;
  if (algo === 'NGRAM' || (algo && !profile.speculative.algorithms.includes(algo as never))) {
    return {
      ok: false,
      error: `speculative_algorithm=${algo} is not supported by the simulated model (profile ${profile.name} supports ${profile.speculative.algorithms.join(', ')})`,
    };
  }
  const settings = resolveSettings(profile, input);
  const modelPath = (args.model_path as string | undefined) ?? profile.model.path;
  const plan: LaunchPlan = {
    settings,
    draftTokensAdjusted: resolveSpeculative(input).adjusted,
    faults: faults.faults,
    timeScale,
    host: (args.host as string | undefined) ?? DEFAULTS.host,
    port: (args.port as number | undefined) ?? DEFAULTS.port,
    modelPath,
    servedModelName: (args.served_model_name as string | undefined) ?? modelPath,
    apiKey: (args.api_key as string | undefined) ?? null,
    nodeRank: (args.node_rank as number | undefined) ?? 0,
    distInitAddr: (args.dist_init_addr as string | undefined) ?? null,
    decodeLogInterval: (args.decode_log_interval as number | undefined) ?? DEFAULT_DECODE_LOG_INTERVAL,
    watchdogTimeoutS: (args.watchdog_timeout as number | undefined) ?? DEFAULTS.watchdogTimeoutS,
    skipWarmup: args.skip_server_warmup === true,
    holdMemory: args.sim_hold_memory === true,
    seed: (args.sim_seed as number | undefined) ?? (args.random_seed as number | undefined) ?? 42,
    serverArgs: {},
  };
  plan.serverArgs = renderServerArgs(plan, args);
  return { ok: true, plan };
}

// ServerArgs as SGLang would dump them (configured values, not derived capacity).
function renderServerArgs(p: LaunchPlan, args: ParsedArgs): Record<string, unknown> {
  const s = p.settings;
  const spec = s.speculative;
  return {
    model_path: p.modelPath,
    tokenizer_path: (args.tokenizer_path as string | undefined) ?? p.modelPath,
    host: p.host,
    port: p.port,
    served_model_name: p.servedModelName,
    context_length: (args.context_length as number | undefined) ?? null,
    mem_fraction_static: s.memFractionStatic,
    max_running_requests: s.maxRunningRequests,
    max_total_tokens: s.maxTotalTokens,
    chunked_prefill_size: s.chunkedPrefillSize,
    cuda_graph_max_bs: s.cudaGraphMaxBs,
    disable_cuda_graph: s.disableCudaGraph,
    page_size: s.pageSize,
    tp_size: s.tpSize,
    dp_size: 1,
    nnodes: s.nnodes,
    node_rank: p.nodeRank,
    dist_init_addr: p.distInitAddr,
    api_key: p.apiKey === null ? null : '***',
    watchdog_timeout: p.watchdogTimeoutS,
    decode_log_interval: p.decodeLogInterval,
    enable_metrics: args.enable_metrics === true,
    speculative_algorithm: spec?.algorithm ?? null,
    speculative_draft_model_path: (args.speculative_draft_model_path as string | undefined) ?? null,
    speculative_num_steps: spec?.numSteps ?? null,
    speculative_eagle_topk: spec?.topk ?? null,
    speculative_num_draft_tokens: spec?.numDraftTokens ?? null,
  };
}
