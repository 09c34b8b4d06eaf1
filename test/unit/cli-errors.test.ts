// Ordinary mistakes end in one-line errors with exit 1 (bad input) or 2 (bad usage), never a stack trace, never a
// spin, never a modified user file. Runs the real built CLI.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { closeStore, createCampaign, openStore, updateCampaign } from '../../src/store/index.js';
import { ensureCliBuilt, isOneLineError, runCli } from './cli-run.js';

let dir: string;
let store: string;
beforeAll(() => {
  ensureCliBuilt();
  dir = mkdtempSync(join(tmpdir(), 'spectune-cli-errors-'));
  store = join(dir, 'spectune.db');
  const db = openStore(store);
  const c = createCampaign(db, { name: 'c', engine: 'sglang', config: { keys: ['speculative_num_steps'] } });
  updateCampaign(db, c.id, { status: 'done', summary: 'no winner' });
  closeStore(db);
}, 180_000);

describe('report', () => {
  it('--html into a missing directory: one line, exit 1, names the directory', async () => {
    const r = await runCli(['report', '--db', store, '--html', '/missing/dir/r.html']);
    expect(r.code, r.stderr).toBe(1);
    expect(isOneLineError(r.stderr), r.stderr).toBe(true);
    expect(r.stderr).toContain('--html /missing/dir/r.html: directory /missing/dir does not exist');
  });

  it('--db on a file that is not a store: refused, exit 1, the file byte for byte unchanged (empty one too)', async () => {
    for (const text of ['my notes\nline two\n', '']) {
      const notes = join(dir, 'notes.txt');
      writeFileSync(notes, text);
      const r = await runCli(['report', '--db', notes]);
      expect(r.code, r.stderr).toBe(1);
      expect(isOneLineError(r.stderr), r.stderr).toBe(true);
      expect(r.stderr).toContain(
        `--db ${notes} is not a spectune store (not an SQLite database); it was left unchanged`,
      );
      expect(readFileSync(notes, 'utf8')).toBe(text);
    }
  });
});

describe('demo --out', () => {
  it('an existing file: one line, exit 1, the file unchanged', async () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, 'keep me\n');
    const r = await runCli(['demo', '--out', file]);
    expect(r.code, r.stderr).toBe(1);
    expect(isOneLineError(r.stderr), r.stderr).toBe(true);
    expect(r.stderr).toContain(`--out ${file}: ${file} is a file, not a directory`);
    expect(readFileSync(file, 'utf8')).toBe('keep me\n');
  });

  it('/proc/nope fails fast (no spin), one line, exit 1', async () => {
    const r = await runCli(['demo', '--out', '/proc/nope'], { timeoutMs: 20_000 });
    expect(r.signal).toBeNull();
    expect(r.code, r.stderr).toBe(1);
    expect(isOneLineError(r.stderr), r.stderr).toBe(true);
    expect(r.stderr).toContain('--out /proc/nope: cannot create /proc/nope');
    expect(r.ms).toBeLessThan(10_000);
  });
});

describe('flag mistakes', () => {
  it('a typo names the nearest flag in one line, exit 2, no usage dump', async () => {
    const r = await runCli(['bench', '--url', 'http://127.0.0.1:1', '--concurency', '8']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'spectune: unknown flag --concurency; did you mean --concurrency? (hint: `spectune bench --help` lists every flag with its default)\n',
    );
  });

  it("a missing value is our own words, not node's parser text", async () => {
    const r = await runCli(['bench', '--url', 'http://127.0.0.1:1', '--concurrency', '--requests', '4']);
    expect(r.code).toBe(2);
    expect(isOneLineError(r.stderr), r.stderr).toBe(true);
    expect(r.stderr).toMatch(/^spectune: --concurrency needs a value, got the flag after it instead/);
    expect(r.stderr).not.toMatch(/ambiguous|Did you forget/);
  });

  it('an unknown command suggests the nearest', async () => {
    const r = await runCli(['bnech']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^spectune: unknown command "bnech"; did you mean bench\?/);
  });
});
