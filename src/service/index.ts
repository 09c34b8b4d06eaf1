// Service control: the public surface of src/service (deploy through a drop-in, safe restart, readiness, rollback).
export {
  createServiceController,
  ServiceController,
  RollbackFailedError,
  ReadyTimeoutError,
  DEFAULT_READY_TIMEOUT_MS,
  type LastSeen,
  type ServiceControllerOptions,
  type ServiceStatus,
  type ReadyResult,
  type FailedStart,
  type RollbackPlan,
  type RollbackResult,
  type StopOptions,
  type ExecStarts,
} from './controller.js';
export { planDeploy, renderPlan, type DeployPlan, type PlanStep, type Changes } from './plan.js';
export { applyDeploy, describeRollbackTarget, type Version } from './deploy.js';
export { DEFAULT_LEASE_MS, leasePaths, renderLeaseScript, TRIAL_DROPIN_NAME, type LeaseOptions } from './lease.js';
export {
  createFileActionLog,
  createMemoryActionLog,
  createCampaignActionLog,
  resolveActionLogPath,
  actionLogOverride,
  userStateDir,
  campaignActionLogDir,
  campaignActionLogPath,
  ACTION_LOG_FIX,
  DEFAULT_ACTION_LOG,
  LEGACY_ACTION_LOG,
  type ActionLog,
  type CampaignActionLog,
} from './action-log.js';
export { normalizeUnitName, dropInPath, splitCatOutput, type UnitFile } from './unit.js';
export { parseUnitState, parseTimespanMs, type UnitState } from './show.js';
export { estimateDrain, describeDrainRisk, type DrainEstimate, type DrainKnown } from './safe-stop.js';
export {
  estimateDrainMs,
  adviseTimeoutStopSec,
  ASSUMED_OUTPUT_TOKENS,
  MARGIN_TEXT,
  type DrainLoad,
  type DrainFigures,
} from './drain.js';
export { diagnoseCollaborators, type Collaborators } from './collaborators.js';
export { tagRankEvents, type RankTag } from './events.js';
export {
  createServiceGroup,
  describeRankDifferences,
  pickGroupVersion,
  mergeGroupVerdict,
  nameOfRank,
  withoutRankDiagnoses,
  ServiceGroup,
  type GroupReady,
  type ServiceGroupOptions,
} from './group.js';
export { describeHooks, runHooks, NO_HOOKS, type RestartHooks } from './hooks.js';
export { checkEndpointPort, urlPort, type EndpointSource } from './endpoint-port.js';
export { isLostHost } from './lost-host.js';
