// Public surface of the onboarding domain (init's discovery and proposal, doctor's judgements): pure.
export type * from './types.js';
export {
  parseRunningUnits,
  filterEngineLike,
  describeCommand,
  describeUnitFiles,
  parseDockerPs,
  chooseUnit,
} from './discover.js';
export { measureStartups, type StartupRecord } from './startup.js';
export { proposeConfig, type InitFacts } from './propose.js';
export { proposeSpace, servingSlots } from './space.js';
export { renderYaml, yamlScalar, type Commented, type YamlValue } from './yaml.js';
export {
  judgeStopTimeout,
  judgeStartup,
  judgeStoreDisk,
  judgeClockSkew,
  judgeJournal,
  judgeDropIn,
  summarizeChecks,
  recommendedStopSec,
  CONSERVATIVE_ITL_MS,
  type StopTimeoutFacts,
  type JournalFacts,
  type DropInFacts,
} from './checks.js';
export {
  readVersion,
  judgeEngine,
  judgeApiKey,
  type EngineFacts,
  type ApiKeyFacts,
  type VersionProbe,
} from './version.js';
export { formatUnits, formatChecks } from './render.js';
