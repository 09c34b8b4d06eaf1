// All diagnosis rules, one file per family; engine adapters take their dialect's subset through rulesForEngine().
import type { EngineName } from '../../engines/types.js';
import type { DiagnosisRule } from '../types.js';
import { CUDA_RULES } from './cuda.js';
import { DISTRIBUTED_RULES } from './distributed.js';
import { ENVIRONMENT_RULES } from './environment.js';
import { LIFECYCLE_RULES } from './lifecycle.js';
import { MEMORY_RULES } from './memory.js';
import { MODEL_LOAD_RULES } from './model-load.js';
import { SLURM_RULES } from './slurm.js';
import { SPECULATIVE_RULES } from './speculative.js';
import { STARTUP_RULES } from './startup.js';

/** Every rule, in family order (the order only breaks exact ties). */
export const ALL_RULES: readonly DiagnosisRule[] = [
  ...MEMORY_RULES,
  ...CUDA_RULES,
  ...SPECULATIVE_RULES,
  ...STARTUP_RULES,
  ...MODEL_LOAD_RULES,
  ...DISTRIBUTED_RULES,
  ...ENVIRONMENT_RULES,
  ...LIFECYCLE_RULES,
  ...SLURM_RULES,
];

// The rules that apply to one engine's dialect (rules without an engine list apply to all).
export function rulesForEngine(engine: EngineName): DiagnosisRule[] {
  return ALL_RULES.filter((r) => !r.engines || r.engines.includes(engine));
}
