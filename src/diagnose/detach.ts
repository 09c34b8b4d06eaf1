// Copy a string out of the chunk it was sliced from, so that keeping one quoted line does not keep its whole
// input chunk (1 MB) alive: V8 substrings share their parent's memory.

/** V8 copies substrings shorter than this anyway (SlicedString::kMinLength). */
const SLICE_MIN = 13;

// A flat copy of s that shares nothing with its parent string.
export function detach(s: string): string {
  return s.length < SLICE_MIN ? s : ` ${s}`.slice(1);
}

// Detach every value of a record of strings (named-group facts).
export function detachAll(r: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(r)) out[k] = detach(v);
  return out;
}
