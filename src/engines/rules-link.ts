// The adapters' `rules` come from the diagnosis module (src/diagnose/index.ts rulesForEngine), read lazily.
// That module is not there yet: until it is, adapters report no rules of their own.
import type { DiagnosisRule } from '../diagnose/types.js';
import type { EngineName } from './types.js';

// Diagnosis rules of one engine's log dialect.
export function loadEngineRules(_engine: EngineName): DiagnosisRule[] {
  return [];
}
