// Where a config message points in the file: the line of the offending key, so that every error reads
// `spectune.yaml:13: benchmark.requets: unknown key` (pure: text in, line numbers out).
import { isMap, isSeq, LineCounter, parseDocument, type Node } from 'yaml';

/** A message that starts with a dotted config path ("benchmark.requets: ..."); the path is group 1. */
const PATH_PREFIX = /^((?:[A-Za-z_][\w-]*|\d+)(?:\.(?:[A-Za-z_][\w-]*|\d+))*): /;

// The 1-based line of the key at a dotted path (the deepest part of it that the file has), or null.
export function lineOfPath(doc: ReturnType<typeof parseDocument>, counter: LineCounter, path: string[]): number | null {
  let node: unknown = doc.contents;
  let offset: number | null = null;
  for (const seg of path) {
    if (isMap(node)) {
      const pair = node.items.find((it) => String((it.key as { value?: unknown } | null)?.value ?? it.key) === seg);
      if (!pair) break;
      offset = (pair.key as Node | null)?.range?.[0] ?? offset;
      node = pair.value;
    } else if (isSeq(node) && /^\d+$/.test(seg)) {
      const item = node.items[Number(seg)] as Node | undefined;
      if (!item) break;
      offset = item.range?.[0] ?? offset;
      node = item;
    } else {
      break;
    }
  }
  return offset === null ? null : counter.linePos(offset).line;
}

// Prefix each message that names a config path with `file:line: ` (the key's line); others get `file: `.
export function locateMessages(file: string, text: string, messages: string[]): string[] {
  const counter = new LineCounter();
  let doc: ReturnType<typeof parseDocument> | null = null;
  try {
    doc = parseDocument(text, { lineCounter: counter, logLevel: 'silent' });
  } catch {
    doc = null;
  }
  return messages.map((m) => {
    const path = PATH_PREFIX.exec(m)?.[1];
    const line = doc && path ? lineOfPath(doc, counter, path.split('.')) : null;
    return `${file}${line === null ? '' : `:${line}`}: ${m}`;
  });
}
