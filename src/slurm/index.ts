// The Slurm domain's public surface: other folders import from here only.
export type * from './types.js';
export { buildSbatchScript, checkJobSpec, parseSbatchOutput, sbatchArgv } from './script.js';
export {
  expandHostlist,
  parseExit,
  parseSacct,
  parseScontrolConfig,
  parseScontrolJob,
  parseSqueue,
  parseState,
} from './parse.js';
export { diagnoseSlurmJob, SLURM_STATE_RULES, type SlurmJobFacts, type SlurmStateRule } from './verdict.js';
export { createSlurmClient, LIVE_STATES, type SlurmClient } from './client.js';
export { endJob, planJobEnd, readJobVerdict, waitForEngine, waitForStart, type JobEndPlan } from './lifecycle.js';
export { proposeBatch, type BatchItem, type ProposeFn } from './batch.js';
export { runSlurmCampaign, type SlurmCampaignOptions, type SlurmCampaignResult } from './campaign.js';
export { scriptFor, scoreTrial, type Placement } from './trial.js';
export type { SlurmBenchPort, SlurmCampaignDeps, SlurmCampaignSpec, SlurmStorePort } from './ports.js';
export { createModelCluster, type ModelCluster, type ModelClusterOptions } from './model-cluster.js';
