// SGLang's start-up log sequence at SGLang's pace (profile load time × time scale), up to the capacity line.
import type { Capacity, CapacityOk } from './model.js';
import type { SimProfile } from './profile.js';
import type { LaunchPlan } from './options.js';
import type { SimLogger } from './logger.js';
import { DRAFT_TOKENS_ADJUSTED_MSG } from './settings.js';
import {
  formatCapacityLine,
  formatServerArgs,
  LAUNCH_SIGQUIT_MSG,
  listCaptureBatchSizes,
  SIM_BANNER,
} from './log-format.js';
import { renderNotEnoughMemory } from './traceback.js';

/** Share of the profile's load time spent in each phase (the rest goes to uvicorn start and warm-up). */
export const PHASES = {
  initDist: 0.03,
  loadWeights: 0.6,
  loadDraft: 0.06,
  kvAlloc: 0.02,
  captureGraph: 0.08,
  captureDraft: 0.07,
  capacity: 0.02,
} as const;

/** What start-up needs from its caller. */
export interface StartupDeps {
  plan: LaunchPlan;
  profile: SimProfile;
  capacity: Capacity;
  logger: SimLogger;
  /** Sleep for a share of the load time; resolves false when the run was closed meanwhile. */
  wait: (share: number) => Promise<boolean>;
  /** Multi-node: resolves once every node joined (rank 0) or rank 0 was reached (rank > 0). */
  joinDist: () => Promise<void>;
  /** Called when simulated memory gets allocated (GB per GPU), for --sim-hold-memory. */
  onAllocate: (gb: number) => void;
  now: () => number;
}

/** Outcome of start-up. */
export type StartupResult = { kind: 'ok'; capacity: CapacityOk } | { kind: 'not_enough_memory' } | { kind: 'closed' };

const formatGb = (n: number) => n.toFixed(2);
/** Share of a recurrent state that is the short convolution window (the rest is the SSM state). */
const CONV_SHARE = 0.04;

// Banner, server_args dump and the draft-token rule warning: logged at once by the launcher.
export function logLaunch(d: Pick<StartupDeps, 'plan' | 'logger' | 'profile'>): void {
  d.logger.raw(`${SIM_BANNER}; profile=${d.profile.name}; time scale=${d.plan.timeScale}`);
  if (d.plan.draftTokensAdjusted) d.logger.main(DRAFT_TOKENS_ADJUSTED_MSG);
  d.logger.main(formatServerArgs(d.plan.serverArgs));
}

// Everything from torch.distributed init to the capacity line, or the Not-enough-memory traceback.
export async function runStartup(d: StartupDeps): Promise<StartupResult> {
  const { logger, plan, profile, capacity: cap } = d;
  const rank = plan.nodeRank;
  logger.rank('Init torch distributed begin.', rank);
  await d.joinDist();
  if (!(await d.wait(PHASES.initDist))) return { kind: 'closed' };
  logger.rank('Init torch distributed ends. mem usage=0.00 GB', rank);
  const total = profile.hardware.gpu_memory_gb - profile.memory.runtime_overhead_gb;
  logger.rank(`Load weight begin. avail mem=${formatGb(total)} GB`, rank);
  const t0 = d.now();
  if (!(await d.wait(PHASES.loadWeights))) return { kind: 'closed' };
  const weights = profile.memory.weights_gb / plan.settings.tpSize;
  d.onAllocate(weights);
  logger.rank(
    `Load weight end. elapsed=${((d.now() - t0) / 1000).toFixed(2)} s, type=${profile.model.architecture}, ` +
      `dtype=${profile.model.dtype}, avail mem=${formatGb(total - weights)} GB, mem usage=${formatGb(weights)} GB.`,
    rank,
  );
  if (plan.settings.speculative && !(await loadDraft(d, total - weights))) return { kind: 'closed' };
  if (!(await d.wait(PHASES.kvAlloc))) return { kind: 'closed' };
  if (!cap.ok) {
    logger.rank(renderNotEnoughMemory(), rank);
    logger.main(LAUNCH_SIGQUIT_MSG);
    return { kind: 'not_enough_memory' };
  }
  d.onAllocate(cap.kvCacheGb + cap.statePoolGb);
  logPools(d, cap);
  if (!(await captureGraphs(d, cap))) return { kind: 'closed' };
  if (!(await d.wait(PHASES.capacity))) return { kind: 'closed' };
  if (rank === 0) logger.rank(formatCapacityLine(cap, plan.settings));
  return { kind: 'ok', capacity: cap };
}

// The draft (MTP / EAGLE head) weights are loaded by the speculative worker after the target model.
async function loadDraft(d: StartupDeps, avail: number): Promise<boolean> {
  const draft = d.profile.memory.draft_weights_gb / d.plan.settings.tpSize;
  d.logger.rank(`Load weight begin. avail mem=${formatGb(avail)} GB`, d.plan.nodeRank);
  const t0 = d.now();
  if (!(await d.wait(PHASES.loadDraft))) return false;
  d.onAllocate(draft);
  d.logger.rank(
    `Load weight end. elapsed=${((d.now() - t0) / 1000).toFixed(2)} s, type=${d.profile.model.architecture.replace(/ForConditionalGeneration|ForCausalLM/, '')}ForCausalLMMTP, ` +
      `dtype=${d.profile.model.dtype}, avail mem=${formatGb(avail - draft)} GB, mem usage=${formatGb(draft)} GB.`,
    d.plan.nodeRank,
  );
  return true;
}

// KV (and, for hybrid models, recurrent-state) pool allocation lines.
function logPools(d: StartupDeps, cap: CapacityOk): void {
  const r = d.plan.nodeRank;
  if (cap.maxStateSlots !== null) d.logger.rank(formatMambaLine(d, cap.maxStateSlots), r);
  d.logger.rank(
    `KV Cache is allocated. #tokens: ${cap.maxTotalNumTokens}, K size: ${formatGb(cap.kvCacheGb / 2)} GB, V size: ${formatGb(cap.kvCacheGb / 2)} GB`,
    r,
  );
  d.logger.rank(`Memory pool end. avail mem=${formatGb(cap.availableGpuMemGb + cap.cudaGraphGb)} GB`, r);
}

// mamba pool line (hybrid models); with speculation it also sizes the per-draft-token intermediate caches.
function formatMambaLine(d: StartupDeps, slots: number): string {
  const sp = d.profile.memory.state_pool!;
  const spec = d.plan.settings.speculative;
  const stateGb = (slots * sp.state_mb_per_request) / 1024;
  let line =
    `Mamba Cache is allocated. max_mamba_cache_size: ${slots}, conv_state size: ${formatGb(stateGb * CONV_SHARE)}GB, ` +
    `ssm_state size: ${formatGb(stateGb * (1 - CONV_SHARE))}GB `;
  if (spec) {
    const interGb = (slots * spec.numDraftTokens * sp.mb_per_draft_token) / 1024;
    line += `intermediate_ssm_state_cache size: ${formatGb(interGb * (1 - CONV_SHARE))}GB intermediate_conv_window_cache size: ${formatGb(interGb * CONV_SHARE)}GB `;
  }
  return line;
}

// CUDA graph capture for the target model and, with speculation, the draft model.
async function captureGraphs(d: StartupDeps, cap: CapacityOk): Promise<boolean> {
  const r = d.plan.nodeRank;
  const s = d.plan.settings;
  if (s.disableCudaGraph) return true;
  const before = cap.availableGpuMemGb + cap.cudaGraphGb;
  const targetShare = s.speculative ? 0.6 : 1;
  const stages: [string, number, number][] = [['cuda graph', PHASES.captureGraph, cap.cudaGraphGb * targetShare]];
  if (s.speculative) {
    stages.push(
      ['draft cuda graph', PHASES.captureDraft * 0.7, cap.cudaGraphGb * 0.3],
      ['draft extend cuda graph', PHASES.captureDraft * 0.3, cap.cudaGraphGb * 0.1],
    );
  }
  let avail = before;
  for (const [name, share, mem] of stages) {
    d.logger.rank(`Capture ${name} begin. This can take up to several minutes. avail mem=${formatGb(avail)} GB`, r);
    if (name === 'cuda graph')
      d.logger.rank(`Capture cuda graph bs [${listCaptureBatchSizes(s.cudaGraphMaxBs).join(', ')}]`, r);
    const t0 = d.now();
    if (!(await d.wait(share))) return false;
    d.onAllocate(mem);
    avail -= mem;
    d.logger.rank(
      `Capture ${name} end. Time elapsed: ${((d.now() - t0) / 1000).toFixed(2)} s. mem usage=${formatGb(mem)} GB. avail mem=${formatGb(avail)} GB.`,
      r,
    );
  }
  return true;
}
