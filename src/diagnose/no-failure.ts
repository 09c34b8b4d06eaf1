// Which verdicts name no failure: the input showed a process that is fine, still starting, stopped cleanly, or
// nothing conclusive. Callers that look for the cause of a failed start skip these.
import type { DiagnosisClass, Verdict } from './types.js';

const NO_FAILURE: ReadonlySet<DiagnosisClass> = new Set<DiagnosisClass>([
  'healthy',
  'starting',
  'clean_stop',
  'unknown',
]);

// True when a verdict names no failure (so it cannot be the cause of a crash loop or a failed group start).
export function namesNoFailure(v: Verdict): boolean {
  return v.crashed === false || NO_FAILURE.has(v.class);
}
