// Public API of the simulator: the pure model (capacity, speed, acceptance), profiles, and startSim.
export {
  computeCapacity,
  computeStepMs,
  expectedAcceptLength,
  predictDecodeTokensPerSec,
  computeAcceptanceCurve,
} from './model.js';
export type { Capacity, CapacityOk, CapacityFailure } from './model.js';
export { resolveSettings, resolveSpeculative, DRAFT_TOKENS_ADJUSTED_MSG } from './settings.js';
export type { SimSettings, SettingsInput, SpecSettings } from './settings.js';
export { validateProfile, renderProfileJsonSchema } from './profile.js';
export type { SimProfile, SimFaults } from './profile.js';
export { listProfiles, loadProfile, DEFAULT_PROFILE } from './profiles-io.js';
export { startSim } from './server.js';
export type { SimHandle, SimExit, StartSimOptions } from './server.js';
export { SIM_BANNER, READY_MSG, NOT_ENOUGH_MEMORY_MSG } from './log-format.js';
