// The diagnose domain's public surface: other folders import from here only.
export {
  createDiagnoser,
  diagnoseLogs,
  KERNEL_SOURCE,
  type DiagnoseInput,
  type Diagnoser,
  type DiagnoseOptions,
} from './diagnoser.js';
export { findFatalLine } from './matcher.js';
export { readSystemdMarker } from './markers.js';
export { namesNoFailure } from './no-failure.js';
export { createLineSplitter, type LineSplitter } from './lines.js';
export { parseJournalJson, parseLine, type JournalEntry } from './records.js';
export { ALL_RULES, rulesForEngine } from './rules/index.js';
export { parseActionLog, parseSystemctlShow, type ServiceState } from './state.js';
export { renderDiagnosis } from './render.js';
export type * from './types.js';
export { joinRanks, linkRanks, rankSource, type RankDiagnosis } from './group.js';
