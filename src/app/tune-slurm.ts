// `manager: slurm` for `spectune tune`: binds the Slurm campaign (src/slurm) to the config, the login host over SSH,
// the SQLite store (jobs by id), the search and the benchmark; and its dry run (the sbatch scripts, nothing submitted).
import { resolve } from 'node:path';
import { resolveApiKeyInfo, type SpectuneConfig, type SlurmTargetConfig } from '../config/index.js';
import { readShellCommand, patchShellCommand, getEngine } from '../engines/index.js';
import { ToolError } from '../errors.js';
import type { EventSink } from '../tune/events.js';
import { openHost } from '../host/index.js';
import { assertSqliteFile } from '../local-files.js';
import {
  createSlurmClient,
  proposeBatch,
  runSlurmCampaign,
  scriptFor,
  type SlurmCampaignDeps,
  type SlurmCampaignResult,
  type SlurmCampaignSpec,
  type SlurmStorePort,
} from '../slurm/index.js';
import { listSlurmJobs, openStore, recordSlurmJob, updateSlurmJob, type Db } from '../store/index.js';
import type { TrialRecord, TuneConfig } from '../tune/types.js';
import { createBenchPort } from './tune-bench.js';
import { createSearchPort } from './tune-search.js';
import { createSqliteTuneStore, markCampaignInterrupted } from './tune-store.js';
import { resolveApiKey, specFromConfig } from './tune-wiring.js';

/** Proposals the dry run shows (the first batch; the rest depend on measurements). */
const DRY_RUN_BATCH = 3;

// The slurm section, or a config error.
function slurmOf(cfg: SpectuneConfig): SlurmTargetConfig {
  if (!cfg.target.slurm)
    throw new ToolError('E_CONFIG_INVALID', 'target.slurm: expected the trial job section under manager: slurm', {
      hint: 'add target.slurm with mem and command (README "Slurm")',
    });
  return cfg.target.slurm;
}

// The login host of a slurm target.
export function loginOf(cfg: SpectuneConfig): string {
  const login = cfg.target.slurm?.login ?? cfg.target.hosts[0]?.host;
  if (!login)
    throw new ToolError('E_CONFIG_INVALID', 'target.slurm.login: expected the login host', {
      hint: 'set target.slurm.login: user@login-host',
    });
  return login;
}

// The store port over SQLite: the tuner's campaign store plus the slurm_jobs table.
export function createSlurmStore(db: Db, cfg: SpectuneConfig, login: string): SlurmStorePort {
  const base = createSqliteTuneStore(db, cfg.target.engine);
  return {
    ...base,
    finishCampaign: (id, r) => base.finishCampaign(id, { ...r, endState: null }),
    recordJob: (campaignId, index, jobId) => recordSlurmJob(db, { campaignId, trialSeq: index + 1, jobId, login }),
    updateJob: (campaignId, jobId, u) => updateSlurmJob(db, campaignId, jobId, u),
    openJobs: (campaignId) =>
      listSlurmJobs(db, campaignId, { open: true }).map((j) => ({ jobId: j.jobId, trialIndex: j.trialSeq - 1 })),
    jobNodes: (campaignId) => new Map(listSlurmJobs(db, campaignId).map((j) => [j.trialSeq - 1, j.node])),
  };
}

// The campaign spec: goals from the config, each trial's job from the slurm section (command patched with the config).
export function slurmSpecFromConfig(cfg: SpectuneConfig, freeNodes: number): SlurmCampaignSpec {
  const s = slurmOf(cfg);
  const base = specFromConfig(cfg);
  const url = new URL(cfg.target.endpoint);
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const engine = cfg.target.engine;
  const reading = readShellCommand(s.command, {}, { engine });
  const baseline: TuneConfig = {};
  for (const k of base.keys) {
    const v = reading.effective[k] ?? reading.settings[k];
    if (typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean') baseline[k] = v;
  }
  const patch = (command: string, config: TuneConfig) => patchShellCommand(command, engine, config).execStart.trim();
  return {
    name: `${loginOf(cfg)}:${cfg.target.hosts[0]?.unit ?? 'spectune'}`,
    keys: base.keys,
    engine,
    objective: base.objective,
    constraints: base.constraints,
    budget: base.budget,
    noiseMargin: base.noiseMargin,
    baseline,
    jobFor: (config) => ({
      partition: s.partition,
      nodes: s.nodes,
      gpusPerNode: s.gpusPerTrial,
      cpusPerTask: s.cpusPerTask,
      mem: s.mem,
      timeLimitMin: s.timeLimitMin,
      command: patch(s.command, config),
      rank1Command: s.rank1Command ? patch(s.rank1Command, config) : null,
      port,
      output: s.output,
      chdir: s.chdir,
      env: s.env,
    }),
    jobPrefix: (cfg.target.hosts[0]?.unit ?? 'spectune').replace(/[^A-Za-z0-9._-]/g, '-'),
    partition: s.partition,
    parallel: Math.max(1, Math.min(s.parallel ?? freeNodes, Math.floor(freeNodes / s.nodes) || 1)),
    urlFor: (node, p) => `${url.protocol}//${s.nodeAddresses[node] ?? node}:${p}`,
    healthPath: getEngine(engine).healthPath,
    startTimeoutMs: s.startTimeoutMs,
    readyTimeoutMs: cfg.benchmark.timeouts.readyMs,
    drainSec: s.drainSec,
    confirmElsewhere: s.confirmElsewhere,
  };
}

/** Inputs of a slurm campaign run. */
export interface SlurmTuneInput {
  cfg: SpectuneConfig;
  baseDir: string;
  env: NodeJS.ProcessEnv;
  sshConfig?: string;
  resume: boolean;
  dryRun: boolean;
  onEvent: EventSink;
  signal: AbortSignal;
}

/** The dry run of a slurm target: the scripts of the first batch, nothing submitted. */
export interface SlurmDryRun {
  login: string;
  baseline: TuneConfig;
  scripts: { config: TuneConfig; reason: string; script: string }[];
}

// A record the dry run's batch proposer can read.
function assumed(index: number, kind: TrialRecord['kind'], config: TuneConfig): TrialRecord {
  return {
    index,
    kind,
    config,
    status: 'ok',
    reason: '',
    objective: 1,
    constraintsOk: true,
    violations: [],
    runs: [],
    verdict: null,
    prediction: null,
    capacity: null,
    restarts: 0,
    startedAt: 0,
    endedAt: 0,
  };
}

// Plan the first batch without touching the cluster or any file.
export function planSlurmDryRun(cfg: SpectuneConfig, parallel: number): SlurmDryRun {
  const spec = slurmSpecFromConfig(cfg, parallel);
  const search = createSearchPort(cfg);
  const base = { config: spec.baseline, reason: "baseline: the operator's command line", confirmProbe: false };
  const items = proposeBatch(
    (h) => {
      const p = search.propose(h);
      return p ? { ...p, confirmProbe: p.confirmProbe === true } : null;
    },
    [],
    Math.max(parallel, DRY_RUN_BATCH),
    cfg.objective.goal,
    base,
  );
  const scripts = items.map((it, i) => ({
    config: it.config,
    reason: it.reason,
    script: scriptFor(
      { ...spec, jobPrefix: `${spec.jobPrefix}-cN` },
      assumed(i, i === 0 ? 'baseline' : 'search', it.config),
      { node: null, exclude: [] },
    ),
  }));
  return { login: loginOf(cfg), baseline: spec.baseline, scripts };
}

// Run (or resume) the campaign on the cluster; the store is the config's.
export async function runSlurmTune(
  input: SlurmTuneInput,
): Promise<{ kind: 'dry-run'; plan: SlurmDryRun } | { kind: 'campaign'; result: SlurmCampaignResult }> {
  const { cfg } = input;
  const s = slurmOf(cfg);
  if (input.dryRun) return { kind: 'dry-run', plan: planSlurmDryRun(cfg, s.parallel ?? DRY_RUN_BATCH) };
  assertSqliteFile('store', resolve(input.baseDir, cfg.store), false);
  const login = loginOf(cfg);
  const host = await openHost({ target: login, sshConfig: input.sshConfig });
  const db = openStore(resolve(input.baseDir, cfg.store));
  try {
    const client = createSlurmClient(host);
    const free = await client.listFreeNodes(s.partition);
    const spec = slurmSpecFromConfig(cfg, free.length);
    const apiKey = resolveApiKey(cfg, input.env);
    const authHint = resolveApiKeyInfo(cfg.target, input.env).fix;
    const search = createSearchPort(cfg);
    const deps: SlurmCampaignDeps = {
      client,
      store: createSlurmStore(db, cfg, login),
      propose: (h) => search.propose(h),
      benchFor: (url) => createBenchPort({ ...cfg, target: { ...cfg.target, endpoint: url } }, apiKey, authHint),
      now: Date.now,
    };
    const result = await runSlurmCampaign(deps, spec, { resume: input.resume }, input.onEvent, input.signal);
    if (result.status === 'interrupted')
      markCampaignInterrupted(db, result.campaignId, {
        bestIndex: result.best?.index ?? null,
        summary: result.summary,
      });
    return { kind: 'campaign', result };
  } finally {
    db.close();
    await host.close().catch(() => {});
  }
}
