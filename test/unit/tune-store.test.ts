import { describe, expect, it } from 'vitest';
import { runCampaign } from '../../src/app/tune.js';
import { createSqliteTuneStore } from '../../src/app/tune-store.js';
import { listTrials, openStore } from '../../src/store/index.js';
import { createFakeDeps, createWorld, TEST_SPEC } from './tune-fakes.js';

describe('campaign on the SQLite store', () => {
  it('survives an interruption: the in-flight trial is skipped, every finished trial kept once', async () => {
    const db = openStore(':memory:');
    const world = createWorld();
    const ac = new AbortController();
    let benches = 0;
    world.beforeBench = (phase) => { if (phase === 'bench' && ++benches === 6) { ac.abort(); throw new Error('aborted'); } };
    const deps1 = { ...createFakeDeps(world), store: createSqliteTuneStore(db, 'sglang') };
    const first = await runCampaign(deps1, TEST_SPEC, { resume: false, restore: false }, () => {}, ac.signal);
    expect(first.status).toBe('interrupted');
    world.beforeBench = undefined;
    const deps2 = { ...createFakeDeps(world), store: createSqliteTuneStore(db, 'sglang') };
    const second = await runCampaign(deps2, TEST_SPEC, { resume: true, restore: false }, () => {});
    expect(second.best?.config).toEqual({ speculative_num_steps: 4 });
    const rows = listTrials(db, second.campaignId);
    const measured = rows.filter((r) => r.state === 'measured' && r.purpose === 'search').map((r) => r.params.speculative_num_steps);
    expect(new Set(measured).size).toBe(measured.length);
    expect(rows.filter((r) => r.state === 'skipped')).toHaveLength(1);
    expect(rows.find((r) => r.state === 'failed')?.params).toEqual({ speculative_num_steps: 10 });
    await expect(runCampaign(deps2, TEST_SPEC, { resume: true, restore: false }, () => {})).rejects.toThrow(/no unfinished campaign/);
  });
});
