import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('..', import.meta.url));
// The pure folders of the tuner's building blocks (config's load.ts is the one allowed reader of files).
const PURE = ['search', 'report', 'config'];
const ALLOWED = new Set(['config/load.ts']);
const FORBIDDEN = [
  /from 'node:(fs|child_process|net|http|https|dgram|os)(\/promises)?'/,
  /from '(fs|child_process|net)'/,
  /\bDate\.now\(/,
  /new Date\(\)/,
  /\bprocess\.(env|argv|exit)/,
  /from '\.\.\/(store|host|service|app)\//,
];

function* sources(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* sources(p);
    else if (p.endsWith('.ts') && !p.endsWith('.test.ts')) yield p;
  }
}

it('search, report and config (but load.ts) import no I/O and read no clock', () => {
  const offenders: string[] = [];
  for (const folder of PURE) {
    for (const file of sources(join(SRC, folder))) {
      const rel = file.slice(SRC.length);
      if (ALLOWED.has(rel)) continue;
      // A type-only import brings no code (erased at build), so it is no I/O dependency.
      const text = readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => !l.startsWith('import type '))
        .join('\n');
      for (const re of FORBIDDEN) if (re.test(text)) offenders.push(`${rel}: ${re.source}`);
    }
  }
  expect(offenders).toEqual([]);
});
