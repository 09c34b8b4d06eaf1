// The `spectune tune` use case as the CLI calls it: load the config, wire, run (or dry-run); progress goes to the
// caller's sink (the CLI passes its renderer).
import { resolve } from 'node:path';
import { loadConfig } from '../config/index.js';
import type { EventSink } from '../tune/events.js';
import { trialNumber } from '../tune/types.js';
import { runCampaign, type CampaignResult } from './tune.js';
import { planCampaignDryRun, planResume, type DryRunPlan } from './tune-dry-run.js';
import { readLockHolder } from './status.js';
import { wireCampaign } from './tune-wiring.js';
import { rethrowStoreError } from '../store/index.js';
import { markCampaignInterrupted } from './tune-store.js';
import { withUnitLocks } from './unit-lock.js';
import { preflightLocalState } from '../local-state.js';
import { tuneLocalPaths } from './local-preflight.js';
import { runSlurmTune, type SlurmDryRun } from './tune-slurm.js';

/** Inputs of one `spectune tune`. */
export interface TuneCommandInput {
  configPath: string;
  baseDir: string;
  resume: boolean;
  dryRun: boolean;
  restore: boolean;
  sshConfig?: string;
  confirmProbes?: boolean;
  /** The environment (secrets named in the config are read from it). */
  env: NodeJS.ProcessEnv;
  onEvent: EventSink;
  /** Break a stale host lock in the way (printed). */
  breakLock?: boolean;
  /** --action-log: one action log file for this run (default $SPECTUNE_ACTION_LOG, else the campaign's next to the store). */
  actionLogPath?: string;
  /** --lease: the commit-confirmed lease of a candidate (ms; 0 = off), over the config's target.lease. */
  leaseMs?: number;
  /** --drain-timeout: how long a restart waits for in-flight requests (ms), over the config's target.drainTimeout. */
  drainTimeoutMs?: number;
  signal: AbortSignal;
}

/** What the command prints. */
export type TuneCommandResult = { kind: 'dry-run'; plan: DryRunPlan } | { kind: 'campaign'; result: CampaignResult };

// Run the command; progress goes to input.onEvent.
export async function runTuneCommand(input: TuneCommandInput): Promise<TuneCommandResult> {
  const { onEvent } = input;
  const { config, warnings } = await loadConfig(input.configPath);
  for (const w of warnings) onEvent({ type: 'log', ts: Date.now(), level: 'warn', message: w });
  if (input.leaseMs !== undefined) config.target.leaseMs = input.leaseMs;
  if (input.drainTimeoutMs !== undefined) config.target.drainTimeoutMs = input.drainTimeoutMs;
  if (config.target.manager === 'slurm') {
    const r = await runSlurmTune({
      cfg: config,
      baseDir: resolve(input.baseDir),
      env: input.env,
      sshConfig: input.sshConfig,
      resume: input.resume,
      dryRun: input.dryRun,
      onEvent,
      signal: input.signal,
    });
    return r.kind === 'dry-run' ? { kind: 'dry-run', plan: toDryRunPlan(r.plan) } : r;
  }
  // Everything written here (store, action log, ssh control socket) is checked before any host is touched.
  preflightLocalState(
    tuneLocalPaths(config, {
      baseDir: resolve(input.baseDir),
      env: input.env,
      actionLog: input.actionLogPath,
      dryRun: input.dryRun,
    }),
  );
  const w = await wireCampaign(config, {
    env: input.env,
    baseDir: resolve(input.baseDir),
    sshConfig: input.sshConfig,
    confirmProbes: input.confirmProbes,
    dryRun: input.dryRun,
    onEvent,
    actionLogPath: input.actionLogPath,
  });
  try {
    // A target.endpoint on another port than the unit's --port would wait out the start-up deadline: fail now (dry run too).
    if (config.target.manager === 'systemd') await w.controller.checkEndpointPort('target.endpoint');
    if (input.dryRun) {
      const plan = await planCampaignDryRun(w.controller, w.deps.search, w.spec);
      const held = await Promise.all(
        w.controllers.map(async (c) => ({ c, lock: await readLockHolder(c.host, c.unit) })),
      );
      const locks = held
        .filter((h) => h.lock)
        .map(
          (h) =>
            `${h.c.host.name} ${h.c.unit}: locked by ${h.lock!.text}: the real run would be refused while that run lives (--break-lock only breaks a stale lock${input.resume ? "; --resume breaks the lock of this machine's own killed tune" : ''})`,
        );
      return {
        kind: 'dry-run',
        plan: {
          ...plan,
          ...(locks.length ? { locks } : {}),
          ...(input.resume ? { resume: planResume(resolve(input.baseDir, config.store), w.spec.name) } : {}),
        },
      };
    }
    const units = w.controllers.map((c) => ({ host: c.host, unit: c.unit }));
    return await withUnitLocks(
      units,
      { command: 'tune', breakLock: input.breakLock, resume: input.resume, onEvent, leases: w.controllers },
      async () => {
        const result = await runCampaign(
          w.deps,
          w.spec,
          { resume: input.resume, restore: input.restore },
          onEvent,
          input.signal,
        );
        if (result.status === 'interrupted') {
          try {
            markCampaignInterrupted(w.db, result.campaignId, {
              bestIndex: result.best?.index ?? null,
              summary: result.summary,
            });
          } catch (e) {
            rethrowStoreError(e, w.db.name);
          }
        }
        return { kind: 'campaign' as const, result };
      },
    );
  } finally {
    await w.close();
  }
}

// The slurm dry run in the tuner's dry-run shape: the first batch's sbatch scripts are the "first deploy".
function toDryRunPlan(p: SlurmDryRun): DryRunPlan {
  const scripts = p.scripts.map(
    (s, i) => `# trial ${i + 1}: ${s.reason} — sbatch --parsable on ${p.login}, script on stdin:\n${s.script}`,
  );
  return {
    baseline: p.baseline,
    proposals: p.scripts.slice(1).map((s) => ({ config: s.config, reason: s.reason })),
    firstDeploy: `the first batch of Slurm jobs (--dry-run submits nothing):\n\n${scripts.join('\n')}`,
  };
}

/** A trial in `tune --json`: its record plus `number`, the 1-based trial number progress, summary and report print. */
export type NumberedTrial<T> = T & { number: number };

// The `tune --json` document: the campaign result with every trial (and best/baseline) numbered as the report numbers
// them; `index` stays 0-based for programs that already read it.
export function toTuneJson(result: CampaignResult): Omit<CampaignResult, 'trials' | 'best' | 'baseline'> & {
  trials: NumberedTrial<CampaignResult['trials'][number]>[];
  best: NumberedTrial<NonNullable<CampaignResult['best']>> | null;
  baseline: NumberedTrial<NonNullable<CampaignResult['baseline']>> | null;
} {
  const num = <T extends { index: number }>(t: T): NumberedTrial<T> => ({ number: trialNumber(t.index), ...t });
  return {
    ...result,
    trials: result.trials.map(num),
    best: result.best ? num(result.best) : null,
    baseline: result.baseline ? num(result.baseline) : null,
  };
}
