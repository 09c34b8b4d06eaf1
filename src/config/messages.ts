// Turn schema issues into one-line messages: `path: expected ..., got ...` followed by an example of valid input.
import type { z } from 'zod';
import { distance } from './rules.js';

// Examples of valid input, keyed by path pattern (array indices as *); the longest matching prefix wins.
const EXAMPLES: Record<string, string> = {
  target:
    'target: {engine: sglang, endpoint: "http://10.0.0.5:30000", hosts: [{host: root@10.0.0.5, unit: sglang.service}]}',
  'target.hosts': 'hosts: [{host: root@10.0.0.5, unit: sglang.service, role: rank0}]',
  'target.hosts.*.host': 'host: root@10.0.0.5',
  'target.engine': 'engine: sglang',
  'target.endpoint': 'endpoint: "http://10.0.0.5:30000"',
  'target.gpuMemory': 'gpuMemory: 96GiB',
  space: 'space: {speculative_num_steps: {min: 1, max: 10}}',
  'space.*': 'speculative_num_steps: {min: 1, max: 10, step: 1}  or  cuda_graph_max_bs: {values: [64, 128, 256]}',
  'search.strategy': 'strategy: adaptive',
  'search.noiseMargin': 'noiseMargin: 3%',
  'search.soak': 'soak: {repeats: 1, duration: 10m}',
  objective: 'objective: {metric: decodeTokensPerSec.p50, concurrency: 1, goal: maximize}',
  'objective.metric': 'metric: decodeTokensPerSec.p50',
  constraints:
    'constraints: [{metric: outputTokensPerSec, concurrency: 16, op: ">=", value: 90%, relativeTo: baseline}]',
  'constraints.*.value': 'value: 90%  or  value: 2000',
  benchmark: 'benchmark: {concurrency: [1, 16], requests: 32, inputTokens: 512, outputTokens: 256}',
  'benchmark.timeouts': 'timeouts: {ready: 20m, firstToken: 120s}',
  budget: 'budget: {trials: 20, hours: 4h}',
  'budget.hours': 'hours: 4h',
  store: 'store: ./spectune.db',
};

// Dotted path with numeric indices, e.g. "target.hosts.0.unit".
export function formatPath(path: readonly PropertyKey[]): string {
  return path.length ? path.map(String).join('.') : '(root)';
}

// The example for the deepest known prefix of a path, or null.
export function exampleFor(path: string): string | null {
  const generic = path.split('.').map((s) => (/^\d+$/.test(s) ? '*' : s));
  for (let n = generic.length; n > 0; n--) {
    const exact = EXAMPLES[path.split('.').slice(0, n).join('.')];
    const starred = EXAMPLES[generic.slice(0, n).join('.')];
    const spaceKey = generic[0] === 'space' && n === 2 ? EXAMPLES['space.*'] : undefined;
    const hit = spaceKey ?? exact ?? starred;
    if (hit) return hit;
  }
  return null;
}

// Show a received value briefly: strings quoted, objects as compact JSON, long values cut.
export function describeValue(v: unknown): string {
  if (v === undefined) return 'nothing';
  const s = typeof v === 'string' ? JSON.stringify(v) : (JSON.stringify(v) ?? String(v));
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

// What the schema wanted, in words.
function describeExpected(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return issue.expected === 'object'
        ? 'a mapping'
        : issue.expected === 'array'
          ? 'a list (YAML array)'
          : `a ${issue.expected}`;
    case 'invalid_value':
      return `one of ${issue.values.map((x) => JSON.stringify(x)).join(', ')}`;
    case 'too_small':
      return `${issue.origin === 'array' ? 'at least' : '>='} ${String(issue.minimum)}${issue.origin === 'array' ? ' items' : ''}`;
    case 'too_big':
      return `${issue.origin === 'array' ? 'at most' : '<='} ${String(issue.maximum)}${issue.origin === 'array' ? ' items' : ''}`;
    case 'invalid_format':
      return issue.format === 'url' ? 'a URL such as "http://host:port"' : `a ${issue.format}`;
    case 'invalid_union':
      return 'one of the documented shapes';
    default:
      return issue.message.replace(/^Invalid input: /, '');
  }
}

// A schema node as zod v4 keeps it (its definition: type, shape, element, innerType).
interface SchemaNode {
  _zod: {
    def: {
      type: string;
      shape?: Record<string, SchemaNode>;
      element?: SchemaNode;
      innerType?: SchemaNode;
      in?: SchemaNode;
    };
  };
}

/** The keys the mapping at a path accepts (for "did you mean"), through optional/default/array; [] when unknown. */
export function knownKeysAt(schema: unknown, path: readonly PropertyKey[]): string[] {
  const unwrap = (n: SchemaNode | undefined): SchemaNode | undefined => {
    let s = n;
    while (
      s?._zod?.def &&
      (s._zod.def.innerType ?? s._zod.def.in) &&
      s._zod.def.type !== 'object' &&
      s._zod.def.type !== 'array'
    )
      s = s._zod.def.innerType ?? s._zod.def.in;
    return s;
  };
  let node = unwrap(schema as SchemaNode);
  for (const seg of path) {
    const def = node?._zod?.def;
    node = unwrap(def?.type === 'array' ? def.element : def?.type === 'object' ? def.shape?.[String(seg)] : undefined);
  }
  const def = node?._zod?.def;
  return def?.type === 'object' && def.shape ? Object.keys(def.shape) : [];
}

// The known key closest to a mistyped one (edit distance within a third of its length, at least 2), or null.
function nearestKey(word: string, known: string[]): string | null {
  let best: string | null = null;
  let bestD = Math.max(2, Math.floor(word.length / 3)) + 1;
  for (const k of known) {
    const d = distance(word.toLowerCase(), k.toLowerCase());
    if (d < bestD) {
      best = k;
      bestD = d;
    }
  }
  return best;
}

// One message per issue; unknown keys get their own wording (typos are the usual cause) and the nearest known key.
export function formatIssue(
  issue: z.core.$ZodIssue,
  known: (path: readonly PropertyKey[]) => string[] = () => [],
): string {
  const path = formatPath(issue.path);
  if (issue.code === 'unrecognized_keys') {
    const where = issue.path.length ? `${path}.` : '';
    const keys = known(issue.path);
    return issue.keys
      .map((k) => {
        const near = nearestKey(k, keys);
        return `${where}${k}: unknown key (${near ? `did you mean ${near}?` : 'check the spelling'})`;
      })
      .join('\n');
  }
  const got = 'input' in issue ? describeValue(issue.input) : 'nothing';
  const example = exampleFor(path);
  return `${path}: expected ${describeExpected(issue)}, got ${got}${example ? ` (example: ${example})` : ''}`;
}
