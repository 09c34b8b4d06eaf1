// Renamed config keys: old spellings are moved to the new place with a warning that says what to rename.

/** One rename: dotted path before and after, and when it changed. */
interface Rename {
  from: string;
  to: string;
  since: string;
}

// Spellings seen in earlier drafts and in neighbouring tools (SGLang auto_benchmark, vLLM sweep).
const RENAMES: Rename[] = [
  { from: 'search.margin', to: 'search.noiseMargin', since: '0.1' },
  { from: 'search.noise_margin', to: 'search.noiseMargin', since: '0.1' },
  { from: 'search.algorithm', to: 'search.strategy', since: '0.1' },
  { from: 'search_space', to: 'space', since: '0.1' },
  { from: 'objective.direction', to: 'objective.goal', since: '0.1' },
  { from: 'budget.maxTrials', to: 'budget.trials', since: '0.1' },
  { from: 'budget.max_trials', to: 'budget.trials', since: '0.1' },
  { from: 'budget.maxHours', to: 'budget.hours', since: '0.1' },
  { from: 'budget.max_duration_hours', to: 'budget.hours', since: '0.1' },
  { from: 'bench', to: 'benchmark', since: '0.1' },
  { from: 'db', to: 'store', since: '0.1' },
  { from: 'target.url', to: 'target.endpoint', since: '0.1' },
  { from: 'target.api_key_env', to: 'target.apiKeyEnv', since: '0.1' },
];

type Obj = Record<string, unknown>;

// Find the object holding the last segment of a dotted path, or null.
function parentOf(root: Obj, path: string[]): Obj | null {
  let cur: unknown = root;
  for (const seg of path.slice(0, -1)) {
    if (!cur || typeof cur !== 'object' || Array.isArray(cur)) return null;
    cur = (cur as Obj)[seg];
  }
  return cur && typeof cur === 'object' && !Array.isArray(cur) ? (cur as Obj) : null;
}

// Move renamed keys to their new place (on a copy) and return one migration message per rename applied.
export function migrateKeys(input: unknown): { value: unknown; messages: string[] } {
  if (!input || typeof input !== 'object' || Array.isArray(input)) return { value: input, messages: [] };
  const root = structuredClone(input) as Obj;
  const messages: string[] = [];
  for (const r of RENAMES) {
    const from = r.from.split('.');
    const to = r.to.split('.');
    const src = parentOf(root, from);
    const key = from[from.length - 1];
    if (!src || !(key in src)) continue;
    const dst = parentOf(root, to);
    const newKey = to[to.length - 1];
    if (dst && !(newKey in dst)) {
      dst[newKey] = src[key];
      delete src[key];
      messages.push(`${r.from}: renamed to ${r.to} in spectune ${r.since}; rename the key (value moved for now)`);
    } else {
      messages.push(`${r.from}: renamed to ${r.to} in spectune ${r.since}; remove it (${r.to} is already set)`);
      delete src[key];
    }
  }
  return { value: root, messages };
}
