// Public surface of the store: open it, then pass the Db to repository functions.
export { openStore, closeStore, migrate, type Db } from './db.js';
export { guardDiskFull, rethrowStoreError, describeDisk, type DiskFacts } from './full.js';
export {
  createCampaign,
  getCampaign,
  latestCampaign,
  latestStartedCampaign,
  campaignRan,
  listCampaigns,
  markNeverStarted,
  NEVER_STARTED,
  updateCampaign,
  type Campaign,
  type CampaignStatus,
  type CampaignEndState,
  type UnitSnapshot,
} from './campaigns.js';
export {
  recordTrialStart,
  markTrialState,
  recordTrialResult,
  listTrials,
  getTrial,
  findUnfinishedTrial,
  getTrialConfig,
  FINAL_STATES,
  type Trial,
  type TrialState,
  type TrialStartInput,
  type TrialResultInput,
  type ConfigSnapshot,
} from './trials.js';
export {
  listBenchRuns,
  listSamples,
  listVerdicts,
  recordEngineMetrics,
  listEngineMetrics,
  type EngineMetricsRecord,
} from './results.js';
export { recordAction, listActions, recordEvent, listEvents } from './actions.js';
export { recordRunStart, touchRun, listRunSegments, type RunSegment } from './runs.js';
export { MIGRATIONS, type Migration } from './migrations/index.js';
export { recordSlurmJob, updateSlurmJob, listSlurmJobs, type SlurmJobRow } from './slurm-jobs.js';
