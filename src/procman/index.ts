export { createProcessManager, renderShow, toUnitName, validateServiceDef, type ProcessManager } from './manager.js';
export type { JournalEntry, JournalPage, RestartPolicy, ServiceDef, ServiceResult, ServiceShow } from './types.js';
export { formatStatus, isCleanExit, type ProcessExit } from './exit-status.js';
