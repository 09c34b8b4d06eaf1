// An index.ts that says "other folders import from here only" is held to it by biome.jsonc's import rule, and the rule
// holds only folders that say so: the claims and the rule agree, and the real Biome binary reports a deep import.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const SRC = join(ROOT, 'src');
const BIOME = join(ROOT, 'node_modules', '.bin', 'biome');
const CLAIM = /other folders import from here only/;

type Override = {
  includes?: string[];
  linter?: { rules?: { style?: { noRestrictedImports?: { options?: { patterns?: { group: string[] }[] } } } } };
};

// biome.jsonc without its whole-line comments.
function readBiomeConfig(): { overrides?: Override[] } {
  const text = readFileSync(join(ROOT, 'biome.jsonc'), 'utf8');
  return JSON.parse(
    text
      .split('\n')
      .filter((l) => !/^\s*\/\//.test(l))
      .join('\n'),
  );
}

// Folders of src/ whose index.ts claims to be the only way in.
function listClaimingFolders(): string[] {
  return readdirSync(SRC, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .filter((name) => {
      try {
        return CLAIM.test(readFileSync(join(SRC, name, 'index.ts'), 'utf8').split('\n')[0]);
      } catch {
        return false;
      }
    })
    .sort();
}

// Folders the import rule closes: groups of the form ["**/NAME/**", "!**/NAME/index.js"] on src/**.
function listEnforcedFolders(): string[] {
  const folders: string[] = [];
  for (const o of readBiomeConfig().overrides ?? []) {
    const patterns = o.linter?.rules?.style?.noRestrictedImports?.options?.patterns ?? [];
    for (const { group } of patterns) {
      const m = /^\*\*\/([^/*]+)\/\*\*$/.exec(group[0] ?? '');
      if (m && o.includes?.includes('src/**') && group.includes(`!**/${m[1]}/index.js`)) folders.push(m[1]);
    }
  }
  return folders.sort();
}

const scratch = mkdtempSync(join(tmpdir(), 'spectune-import-claims-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// Lint files (path -> text) laid out like src/ with the repository's biome.jsonc; "file:line" of each import finding.
function lintScratch(files: Record<string, string>): string[] {
  const dir = mkdtempSync(join(scratch, 'tree-'));
  writeFileSync(join(dir, 'biome.jsonc'), readFileSync(join(ROOT, 'biome.jsonc')));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, dirname(path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const r = spawnSync(BIOME, ['lint', '--vcs-enabled=false', '--reporter=github', '--max-diagnostics=none', '.'], {
    cwd: dir,
    encoding: 'utf8',
  });
  expect(r.error).toBeUndefined();
  return [...r.stdout.matchAll(/title=lint\/style\/noRestrictedImports,file=([^,]+),line=(\d+)/g)]
    .map((m) => `${m[1].slice(dir.length + 1)}:${m[2]}`)
    .sort();
}

describe('index.ts import claims', () => {
  const claiming = listClaimingFolders();

  it('the import rule closes exactly the folders whose index.ts says "other folders import from here only"', () => {
    expect(claiming).toContain('diagnose');
    expect(listEnforcedFolders()).toEqual(claiming);
  });

  it('Biome reports a deep import into each such folder, and neither its index nor a sibling import', () => {
    const files: Record<string, string> = {};
    for (const f of claiming) {
      files[`src/zz-outside/${f}.ts`] =
        `import { a } from '../${f}/index.js';\nimport { b } from '../${f}/deep/x.js';\nexport const y = [a, b];\n`;
      files[`src/${f}/zz-inside.ts`] =
        `import { a } from './x.js';\nimport { b } from '../${f}-other/y.js';\nexport const y = [a, b];\n`;
    }
    expect(lintScratch(files)).toEqual(claiming.map((f) => `src/zz-outside/${f}.ts:2`).sort());
  });
});
