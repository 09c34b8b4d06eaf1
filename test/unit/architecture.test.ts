// ARCHITECTURE.md stays true: the folder import graph of src/ (non-test files) has no cycle, every import goes to a
// lower layer of the document's own table, and every folder is placed in it.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const SRC = join(ROOT, 'src');
const ROOT_FOLDER = '(root)';

type Edge = { from: string; to: string; file: string; spec: string };

// The layer of each folder, from the table of ARCHITECTURE.md (rows "| N | `a` `b` | ... |").
function readLayers(markdown: string): Map<string, number> {
  const layers = new Map<string, number>();
  for (const line of markdown.split('\n')) {
    const m = /^\|\s*(\d+)\s*\|([^|]+)\|/.exec(line);
    if (!m) continue;
    for (const [, name] of m[2].matchAll(/`([^`]+)`/g)) {
      if (layers.has(name)) throw new Error(`ARCHITECTURE.md places ${name} twice`);
      layers.set(name, Number(m[1]));
    }
  }
  return layers;
}

// Every non-test .ts file under src/.
function listSources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return listSources(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [p] : [];
  });
}

// The top folder under src/ a path belongs to.
function folderOf(path: string): string {
  const parts = relative(SRC, path).split(sep);
  return parts.length > 1 ? parts[0] : ROOT_FOLDER;
}

// Imports between folders: static, `import type`, re-exports and dynamic import() of relative paths.
function readEdges(): Edge[] {
  const edges: Edge[] = [];
  for (const file of listSources(SRC)) {
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName: spec } of info.importedFiles) {
      if (!spec.startsWith('.')) continue;
      const target = resolve(dirname(file), spec);
      if (!target.startsWith(SRC + sep)) continue;
      const from = folderOf(file);
      const to = folderOf(target);
      if (from !== to) edges.push({ from, to, file: relative(ROOT, file), spec });
    }
  }
  return edges;
}

// Imports that break the layering: to a folder of the same or a higher layer, or from/to an unplaced folder.
function findViolations(edges: Edge[], layers: Map<string, number>): string[] {
  return edges.flatMap((e) => {
    const a = layers.get(e.from);
    const b = layers.get(e.to);
    if (a === undefined || b === undefined)
      return [`${e.file}: imports ${e.spec}, but ${a === undefined ? e.from : e.to} is not in the layer table`];
    return a > b
      ? []
      : [
          `${e.file}: ${e.from} (layer ${a}) imports ${e.spec} of ${e.to} (layer ${b}); only lower layers may be imported`,
        ];
  });
}

// One cycle of the folder graph as "a -> b -> a", or null.
function findCycle(edges: Edge[]): string | null {
  const next = new Map<string, Set<string>>();
  for (const e of edges) next.set(e.from, (next.get(e.from) ?? new Set()).add(e.to));
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (n: string): string | null => {
    if (state.get(n) === 'open') return [...path.slice(path.indexOf(n)), n].join(' -> ');
    if (state.get(n) === 'done') return null;
    state.set(n, 'open');
    path.push(n);
    for (const m of next.get(n) ?? []) {
      const c = visit(m);
      if (c) return c;
    }
    path.pop();
    state.set(n, 'done');
    return null;
  };
  for (const n of next.keys()) {
    const c = visit(n);
    if (c) return c;
  }
  return null;
}

const layers = readLayers(readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8'));
const edges = readEdges();

describe('ARCHITECTURE.md layering', () => {
  it('places every folder of src/ in the layer table', () => {
    const folders = readdirSync(SRC, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    expect(folders.length).toBeGreaterThan(10);
    expect(folders.filter((f) => !layers.has(f))).toEqual([]);
    expect(layers.get(ROOT_FOLDER)).toBe(0);
  });

  it('reads a real import graph (cli imports app, app imports service)', () => {
    const has = (from: string, to: string) => edges.some((e) => e.from === from && e.to === to);
    expect(has('cli', 'app')).toBe(true);
    expect(has('app', 'service')).toBe(true);
    expect(edges.some((e) => e.spec.endsWith('/events.js'))).toBe(true);
  });

  it('has no import that goes to the same or a higher layer', () => {
    expect(findViolations(edges, layers)).toEqual([]);
  });

  it('has no folder cycle', () => {
    expect(findCycle(edges)).toBeNull();
  });

  it('catches an upward import, a cycle and an unplaced folder', () => {
    const up: Edge = { from: 'app', to: 'cli', file: 'src/app/x.ts', spec: '../cli/io.js' };
    expect(findViolations([up], layers)).toEqual([
      expect.stringMatching(/app \(layer 7\) imports \.\.\/cli\/io\.js of cli \(layer 8\)/),
    ]);
    expect(findCycle([up, { ...up, from: 'cli', to: 'app' }])).toMatch(/^(app -> cli -> app|cli -> app -> cli)$/);
    expect(
      findViolations(
        [{ from: 'newfolder', to: ROOT_FOLDER, file: 'src/newfolder/a.ts', spec: '../errors.js' }],
        layers,
      ),
    ).toEqual([expect.stringMatching(/newfolder is not in the layer table/)]);
  });
});
