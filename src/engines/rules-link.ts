// The adapters' `rules` come from the diagnosis module, read lazily (on first access of `adapter.rules`), so
// neither module needs the other while it loads.
import { rulesForEngine } from '../diagnose/index.js';
import type { DiagnosisRule } from '../diagnose/types.js';
import type { EngineName } from './types.js';

// Diagnosis rules of one engine's log dialect.
export function loadEngineRules(engine: EngineName): DiagnosisRule[] {
  return rulesForEngine(engine);
}
