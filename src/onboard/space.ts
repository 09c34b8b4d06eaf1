// The search space init proposes for a unit (pure): each engine's adapter proposes the speculative knob in force and
// a range around it, or — when speculation is off — a knob that is safe to tune, with the reason in words.
import { getEngine } from '../engines/registry.js';
import type { ParamValue } from '../engines/types.js';
import type { Commented, YamlValue } from './yaml.js';
import type { EngineUnit } from './types.js';

/** A proposed dimension: the config value and the comment that explains it. */
export interface ProposedDimension {
  key: string;
  value: YamlValue;
  why: string[];
}

// A number setting, or null.
function num(v: ParamValue | undefined): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

// The proposed space for a unit.
export function proposeSpace(u: EngineUnit): ProposedDimension[] {
  return getEngine(u.engine).proposeSpace(u);
}

// The space as config entries with their comments.
export function spaceEntries(dims: ProposedDimension[]): Record<string, Commented> {
  return Object.fromEntries(dims.map((d) => [d.key, { comment: d.why, value: d.value }]));
}

// How many concurrent requests the unit serves at most (slots, running-request or sequence caps), or null.
export function servingSlots(u: EngineUnit): number | null {
  const s = u.settings;
  const cap = num(s[getEngine(u.engine).maxRequestsKey]);
  return cap !== null && cap > 0 ? cap : null;
}
