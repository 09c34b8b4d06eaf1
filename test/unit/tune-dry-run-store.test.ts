// `tune --dry-run` writes nothing locally: the store is opened in memory and no action log file is created.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { wireCampaign } from '../../src/app/tune-wiring.js';
import { validateConfig } from '../../src/config/index.js';

const RAW = {
  target: { engine: 'sglang', endpoint: 'http://127.0.0.1:30000', hosts: [{ unit: 'sglang-qwen.service' }] },
  space: { speculative_num_steps: { min: 1, max: 5 } },
  objective: { metric: 'decodeTokensPerSec.p50', concurrency: 1 },
  store: './spectune.db',
};

describe('tune wiring', () => {
  it('a dry run opens no store file and no action log; a real run creates the store', async () => {
    const v = validateConfig(RAW);
    if (!v.ok) throw new Error(v.errors.join('; '));
    const dir = mkdtempSync(join(tmpdir(), 'spectune-dryrun-'));
    const actionLogPath = join(dir, 'actions.jsonl');
    const dry = await wireCampaign(v.config, { env: {}, baseDir: dir, actionLogPath, onEvent: () => {}, dryRun: true });
    expect(dry.db.name).toBe(':memory:');
    await dry.close();
    expect(existsSync(join(dir, 'spectune.db'))).toBe(false);
    expect(existsSync(actionLogPath)).toBe(false);
    const real = await wireCampaign(v.config, { env: {}, baseDir: dir, actionLogPath, onEvent: () => {} });
    await real.close();
    expect(existsSync(join(dir, 'spectune.db'))).toBe(true);
  });

  it('refuses a store path that holds a file which is not a store, and leaves it unchanged', async () => {
    const v = validateConfig(RAW);
    if (!v.ok) throw new Error(v.errors.join('; '));
    const dir = mkdtempSync(join(tmpdir(), 'spectune-dryrun-'));
    writeFileSync(join(dir, 'spectune.db'), 'my notes\n');
    await expect(wireCampaign(v.config, { env: {}, baseDir: dir, onEvent: () => {} })).rejects.toMatchObject({
      code: 'E_INPUT_UNUSABLE',
      message: expect.stringContaining('is not a spectune store'),
    });
    expect(readFileSync(join(dir, 'spectune.db'), 'utf8')).toBe('my notes\n');
  });
});
