// Pure unified diff of two small texts (unit files, ExecStart flag lists), for --dry-run and logs.

/** Lines of context kept around each change (as `diff -u`). */
const CONTEXT = 3;

type Op = { kind: ' ' | '-' | '+'; line: string; a: number; b: number };

// Longest-common-subsequence edit script; inputs are a few dozen lines, so O(n*m) is fine.
function editScript(a: string[], b: string[]): Op[] {
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--)
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) ops.push({ kind: ' ', line: a[i], a: i++, b: j++ });
    else if (i < a.length && (j >= b.length || lcs[i + 1][j] >= lcs[i][j + 1]))
      ops.push({ kind: '-', line: a[i], a: i++, b: j });
    else ops.push({ kind: '+', line: b[j], a: i, b: j++ });
  }
  return ops;
}

// Group changed lines with their context into hunks.
function hunks(ops: Op[]): Op[][] {
  const changed = ops.map((o, k) => (o.kind === ' ' ? -1 : k)).filter((k) => k >= 0);
  const groups: Op[][] = [];
  let start = -1;
  let end = -1;
  for (const k of changed) {
    if (start >= 0 && k - CONTEXT <= end + CONTEXT) {
      end = k;
      continue;
    }
    if (start >= 0) groups.push(ops.slice(Math.max(0, start - CONTEXT), Math.min(ops.length, end + CONTEXT + 1)));
    start = k;
    end = k;
  }
  if (start >= 0) groups.push(ops.slice(Math.max(0, start - CONTEXT), Math.min(ops.length, end + CONTEXT + 1)));
  return groups;
}

// Split text into lines without the final empty one.
function toLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

// Render `diff -u` of two texts; empty string when they are equal.
export function unifiedDiff(before: string, after: string, labels: { from: string; to: string }): string {
  const ops = editScript(toLines(before), toLines(after));
  const groups = hunks(ops);
  if (!groups.length) return '';
  const out = [`--- ${labels.from}`, `+++ ${labels.to}`];
  for (const g of groups) {
    const aStart = g[0].a;
    const bStart = g[0].b;
    const aLen = g.filter((o) => o.kind !== '+').length;
    const bLen = g.filter((o) => o.kind !== '-').length;
    out.push(`@@ -${aLen ? aStart + 1 : aStart},${aLen} +${bLen ? bStart + 1 : bStart},${bLen} @@`);
    for (const o of g) out.push(`${o.kind}${o.line}`);
  }
  return `${out.join('\n')}\n`;
}
