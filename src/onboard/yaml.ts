// A small commented-YAML writer (pure): top-level sections in block style with a comment above each key, leaves
// (scalars, lists of scalars, small maps of scalars) in flow style, so the file reads like a hand-written one.

/** A value with comment lines written above its key. */
export interface Commented {
  comment: string[];
  value: YamlValue;
}
/** What the writer accepts. */
export type YamlValue = string | number | boolean | YamlValue[] | { [key: string]: YamlValue | Commented };

/** Words YAML would read as something other than a string. */
const RESERVED = /^(?:true|false|yes|no|on|off|null|~|y|n)$/i;

// Is v a Commented wrapper?
function isCommented(v: unknown): v is Commented {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    'comment' in v &&
    'value' in v &&
    Object.keys(v).length === 2
  );
}

// A scalar: plain when unambiguous, else a double-quoted (JSON) string, which YAML reads the same.
export function yamlScalar(v: string | number | boolean): string {
  if (typeof v !== 'string') return String(v);
  const plain = /^[A-Za-z_./][A-Za-z0-9_./@+-]*$/.test(v) && !RESERVED.test(v);
  return plain ? v : JSON.stringify(v);
}

// Is a value a leaf (written in flow style on one line)?
function isLeaf(v: YamlValue): boolean {
  if (typeof v !== 'object') return true;
  const items = Array.isArray(v) ? v : Object.values(v);
  return items.every((x) => typeof x !== 'object');
}

// One-line flow form of a leaf.
function flow(v: YamlValue): string {
  if (typeof v !== 'object') return yamlScalar(v);
  if (Array.isArray(v)) return `[${v.map(flow).join(', ')}]`;
  return `{ ${Object.entries(v)
    .map(([k, x]) => `${k}: ${flow(x as YamlValue)}`)
    .join(', ')} }`;
}

// Comment lines at an indent.
function comments(lines: string[], pad: string): string[] {
  return lines.map((l) => `${pad}# ${l}`.trimEnd());
}

// Lines of a key/value at an indent.
function entry(key: string, raw: YamlValue | Commented, pad: string): string[] {
  const { comment, value } = isCommented(raw) ? raw : { comment: [], value: raw };
  const head = comments(comment, pad);
  if (isLeaf(value)) return [...head, `${pad}${key}: ${flow(value)}`];
  if (Array.isArray(value)) {
    return [...head, `${pad}${key}:`, ...value.flatMap((item) => listItem(item, `${pad}  `))];
  }
  return [...head, `${pad}${key}:`, ...Object.entries(value).flatMap(([k, v]) => entry(k, v, `${pad}  `))];
}

// A list item: a flow leaf, or a block map whose first key shares the dash line.
function listItem(item: YamlValue, pad: string): string[] {
  if (isLeaf(item) || Array.isArray(item)) return [`${pad}- ${flow(item)}`];
  const lines = Object.entries(item).flatMap(([k, v]) => entry(k, v, `${pad}  `));
  return [`${pad}- ${lines[0].slice(pad.length + 2)}`, ...lines.slice(1)];
}

// Render a document: header comments, then each top-level section (blank line between sections).
export function renderYaml(header: string[], doc: Record<string, YamlValue | Commented>): string {
  const blocks = Object.entries(doc).map(([k, v]) => entry(k, v, '').join('\n'));
  return `${comments(header, '').join('\n')}\n\n${blocks.join('\n\n')}\n`;
}
