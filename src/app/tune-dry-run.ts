// `spectune tune --dry-run`: the baseline and the search's opening proposals with the exact files and commands of
// the first deploy, without touching the service.
import { renderPlan, type ServiceController } from '../service/index.js';
import { createTrialRecord } from './trial.js';
import type { TuneSearchPort, TuneSpec } from './tune-ports.js';
import { pickConfig } from './tune-service.js';
import { trialNumber, type TrialRecord, type TuneConfig } from '../tune/types.js';
import { existsSync } from 'node:fs';
import { latestCampaign, listTrials, openStore } from '../store/index.js';
import { toTrialRecord } from './tune-store.js';

/** How many opening proposals the dry run lists (the rest depend on measurements). */
const DRY_RUN_PROPOSALS = 3;
/** The dry run assumes each proposal wins clearly (well beyond any noise margin), to show the climb's path. */
const ASSUMED_GAIN = 1.5;

/** What a dry run shows. */
export interface DryRunPlan {
  baseline: TuneConfig;
  proposals: { config: TuneConfig; reason: string }[];
  firstDeploy: string | null;
  /** --resume --dry-run: what the resume would roll back and redo (absent without --resume). */
  resume?: string[];
  /** Units whose host lock another run holds: the real run would be refused (absent when every lock is free). */
  locks?: string[];
}

// What `tune --resume` would do with the store as it is, read-only: the campaign it goes on with, the trials kept,
// and the interrupted trial it would discard and redo after putting the service back on known-good.
export function planResume(storePath: string, name: string): string[] {
  if (!existsSync(storePath))
    return [`no store at ${storePath}: nothing to resume (a real --resume would refuse; run without --resume)`];
  const db = openStore(storePath);
  try {
    const c = latestCampaign(db);
    if (!c || c.name !== name || c.status === 'done' || c.status === 'aborted') {
      return [
        `no unfinished campaign "${name}" in ${storePath}: a real --resume would refuse (run without --resume to start a new one)`,
      ];
    }
    const trials = listTrials(db, c.id).map((t) => toTrialRecord(db, t));
    const interrupted = trials.filter((t) => t.status === 'running');
    const kept = trials.length - interrupted.length;
    const lines = [
      `would resume campaign #${c.id} "${c.name}" (${c.status}), keeping its ${kept} finished trial${kept === 1 ? '' : 's'}`,
    ];
    for (const t of interrupted)
      lines.push(
        `trial ${trialNumber(t.index)} (${JSON.stringify(t.config)}) was interrupted: it would be discarded, the service rolled back to its known-good config, and the trial redone`,
      );
    if (!interrupted.length)
      lines.push(
        "no trial was interrupted: the service's health would be checked first, and it would be rolled back to known-good if it is not healthy",
      );
    return lines;
  } finally {
    db.close();
  }
}

// Opening proposals, assuming each one wins clearly (later moves depend on what is measured).
export function listOpeningProposals(
  search: TuneSearchPort,
  baseline: TuneConfig,
  count = DRY_RUN_PROPOSALS,
): DryRunPlan['proposals'] {
  const history: TrialRecord[] = [
    { ...createTrialRecord(0, 'baseline', baseline, 'baseline', 0), status: 'ok', objective: 1, constraintsOk: true },
  ];
  const out: DryRunPlan['proposals'] = [];
  for (let i = 0; i < count; i++) {
    const p = search.propose(history);
    if (!p) break;
    out.push({ config: p.config, reason: `${p.reason}${i ? ' (if the previous one won)' : ''}` });
    history.push({
      ...createTrialRecord(i + 1, 'search', p.config, p.reason, 0),
      status: 'ok',
      objective: ASSUMED_GAIN ** (i + 1),
      constraintsOk: true,
    });
  }
  return out;
}

// Build the dry-run plan from the service as it is now.
export async function planCampaignDryRun(
  ctl: ServiceController,
  search: TuneSearchPort,
  spec: TuneSpec,
): Promise<DryRunPlan> {
  const baseline = pickConfig(await ctl.currentSettings(), spec.keys);
  const proposals = listOpeningProposals(search, baseline);
  const firstDeploy = proposals.length ? renderPlan(await ctl.plan(proposals[0].config)) : null;
  return { baseline, proposals, firstDeploy };
}
