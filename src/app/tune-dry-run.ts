// `spectune tune --dry-run`: the baseline and the search's opening proposals with the exact files and commands of
// the first deploy, without touching the service.
import { renderPlan, type ServiceController } from '../service/index.js';
import { createTrialRecord } from './trial.js';
import type { TuneSearchPort, TuneSpec } from './tune-ports.js';
import { pickConfig } from './tune-service.js';
import type { TrialRecord, TuneConfig } from '../tune/types.js';

/** How many opening proposals the dry run lists (the rest depend on measurements). */
const DRY_RUN_PROPOSALS = 3;
/** The dry run assumes each proposal wins clearly (well beyond any noise margin), to show the climb's path. */
const ASSUMED_GAIN = 1.5;

/** What a dry run shows. */
export interface DryRunPlan {
  baseline: TuneConfig;
  proposals: { config: TuneConfig; reason: string }[];
  firstDeploy: string | null;
}

// Opening proposals, assuming each one wins clearly (later moves depend on what is measured).
export function listOpeningProposals(search: TuneSearchPort, baseline: TuneConfig, count = DRY_RUN_PROPOSALS): DryRunPlan['proposals'] {
  const history: TrialRecord[] = [{ ...createTrialRecord(0, 'baseline', baseline, 'baseline', 0), status: 'ok', objective: 1, constraintsOk: true }];
  const out: DryRunPlan['proposals'] = [];
  for (let i = 0; i < count; i++) {
    const p = search.propose(history);
    if (!p) break;
    out.push({ config: p.config, reason: `${p.reason}${i ? ' (if the previous one won)' : ''}` });
    history.push({ ...createTrialRecord(i + 1, 'search', p.config, p.reason, 0), status: 'ok', objective: ASSUMED_GAIN ** (i + 1), constraintsOk: true });
  }
  return out;
}

// Build the dry-run plan from the service as it is now.
export async function planCampaignDryRun(ctl: ServiceController, search: TuneSearchPort, spec: TuneSpec): Promise<DryRunPlan> {
  const baseline = pickConfig(await ctl.currentSettings(), spec.keys);
  const proposals = listOpeningProposals(search, baseline);
  const firstDeploy = proposals.length ? renderPlan(await ctl.plan(proposals[0].config)) : null;
  return { baseline, proposals, firstDeploy };
}
