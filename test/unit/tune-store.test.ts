import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { loadReportInput } from '../../src/app/report.js';
import { buildReportModel, summarizeModel } from '../../src/report/index.js';
import { runCampaign } from '../../src/app/tune.js';
import { createSqliteTuneStore, markCampaignInterrupted } from '../../src/app/tune-store.js';
import {
  closeStore,
  createCampaign,
  getCampaign,
  listRunSegments,
  listTrials,
  markTrialState,
  migrate,
  MIGRATIONS,
  openStore,
  recordTrialResult,
  recordTrialStart,
} from '../../src/store/index.js';
import { createFakeDeps, createWorld, TEST_SPEC } from './tune-fakes.js';

describe('campaign on the SQLite store', () => {
  it('stores the end state the service port reads after the final deploy, for the report', async () => {
    const db = openStore(':memory:');
    const world = createWorld();
    const base = createFakeDeps(world);
    const unit = {
      host: 'gpu1',
      unit: 'sim.service',
      operatorExecStart: 'sim --speculative-num-steps 1',
      execStart: null,
      dropInPath: '/etc/systemd/system/sim.service.d/90-spectune.conf',
      dropIn: null,
    };
    const asked: string[][] = [];
    const service = {
      ...base.service,
      readEndState: async (keys: string[]) => {
        asked.push(keys);
        return { settings: await base.service.readConfig(keys), healthy: true, units: [unit] };
      },
    };
    const r = await runCampaign(
      { ...base, service, store: createSqliteTuneStore(db, 'sglang') },
      TEST_SPEC,
      { resume: false, restore: false },
      () => {},
    );
    expect(asked).toEqual([TEST_SPEC.keys]);
    const end = getCampaign(db, r.campaignId).endState;
    expect(end).toMatchObject({ settings: r.best?.config, healthy: true, units: [unit] });
    expect(Date.parse(end!.ts)).toBeGreaterThan(0);
    const failing = {
      ...base.service,
      readEndState: async () => {
        throw new Error('ssh: connection reset');
      },
    };
    const r2 = await runCampaign(
      { ...createFakeDeps(createWorld()), service: failing, store: createSqliteTuneStore(db, 'sglang') },
      TEST_SPEC,
      { resume: false, restore: false },
      () => {},
    );
    expect(r2.status).toBe('done');
    expect(getCampaign(db, r2.campaignId)).toMatchObject({ status: 'done', endState: null });
    closeStore(db);
  });

  it('survives an interruption: the in-flight trial is skipped, every finished trial kept once', async () => {
    const db = openStore(':memory:');
    const world = createWorld();
    const ac = new AbortController();
    let benches = 0;
    world.beforeBench = (phase) => {
      if (phase === 'bench' && ++benches === 6) {
        ac.abort();
        throw new Error('aborted');
      }
    };
    const deps1 = { ...createFakeDeps(world), store: createSqliteTuneStore(db, 'sglang') };
    const first = await runCampaign(deps1, TEST_SPEC, { resume: false, restore: false }, () => {}, ac.signal);
    expect(first.status).toBe('interrupted');
    world.beforeBench = undefined;
    const deps2 = { ...createFakeDeps(world), store: createSqliteTuneStore(db, 'sglang') };
    const second = await runCampaign(deps2, TEST_SPEC, { resume: true, restore: false }, () => {});
    expect(second.best?.config).toEqual({ speculative_num_steps: 4 });
    const rows = listTrials(db, second.campaignId);
    const measured = rows
      .filter((r) => r.state === 'measured' && r.purpose === 'search')
      .map((r) => r.params.speculative_num_steps);
    expect(new Set(measured).size).toBe(measured.length);
    expect(rows.filter((r) => r.state === 'skipped')).toHaveLength(1);
    expect(rows.find((r) => r.state === 'failed')?.params).toEqual({ speculative_num_steps: 10 });
    await expect(runCampaign(deps2, TEST_SPEC, { resume: true, restore: false }, () => {})).rejects.toThrow(
      /no unfinished campaign/,
    );
  });

  it('counts only the running time across an overnight interruption (run segments in the store)', async () => {
    const db = openStore(':memory:');
    const world = createWorld();
    const ac = new AbortController();
    let benches = 0;
    world.beforeBench = (phase) => {
      if (phase === 'bench' && ++benches === 4) {
        ac.abort();
        throw new Error('aborted');
      }
    };
    const spec = { ...TEST_SPEC, budget: { maxTrials: 20, maxHours: 1 } };
    const first = await runCampaign(
      { ...createFakeDeps(world), store: createSqliteTuneStore(db, 'sglang') },
      spec,
      { resume: false, restore: false },
      () => {},
      ac.signal,
    );
    world.beforeBench = undefined;
    const logs: string[] = [];
    const deps2 = { ...createFakeDeps(world, 10, 10 * 3_600_000), store: createSqliteTuneStore(db, 'sglang') };
    const second = await runCampaign(deps2, spec, { resume: true, restore: false }, (e) => {
      if (e.type === 'log') logs.push(e.message);
    });
    expect(second.summary).toMatch(/^search finished/);
    expect(
      listTrials(db, first.campaignId).filter((t) => t.purpose === 'search' && t.state !== 'skipped'),
    ).toHaveLength(9);
    const segs = listRunSegments(db, first.campaignId);
    expect(segs).toHaveLength(2);
    expect(Date.parse(segs[0].lastActiveAt)).toBeGreaterThan(Date.parse(segs[0].startedAt));
    expect(logs.find((m) => m.startsWith('resuming campaign'))).toMatch(
      /min of running time spent \(interruptions not counted\)/,
    );
    closeStore(db);
  });

  it("opens a store from before run segments (schema 1) and resumes its campaign, counting its trials' durations", async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'spectune-tune-store-')), 'spectune.db');
    const old = new Database(file);
    migrate(old, MIGRATIONS.slice(0, 1));
    const c = createCampaign(old, {
      name: TEST_SPEC.name,
      engine: 'sglang',
      config: {},
      ts: '2026-03-09T20:00:00.000Z',
    });
    const t = recordTrialStart(old, {
      campaignId: c.id,
      params: { speculative_num_steps: 1 },
      purpose: 'baseline',
      reason: 'baseline',
      ts: '2026-03-09T20:00:00.000Z',
    });
    markTrialState(old, t.id, 'running', '2026-03-09T20:01:00.000Z');
    recordTrialResult(old, t.id, {
      state: 'measured',
      objective: 123,
      constraintsOk: true,
      ts: '2026-03-09T20:05:00.000Z',
    });
    old.close();
    const db = openStore(file);
    expect(db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    const store = createSqliteTuneStore(db, 'sglang');
    const now = Date.parse('2026-03-10T08:00:00.000Z');
    const reopened = store.openCampaign({ resume: true, name: TEST_SPEC.name, spec: {}, now });
    expect(reopened).toMatchObject({ id: c.id, resumed: true, activeMs: 5 * 60_000 });
    store.markActive(c.id, now + 60_000);
    expect(listRunSegments(db, c.id)).toEqual([
      expect.objectContaining({ startedAt: '2026-03-10T08:00:00.000Z', lastActiveAt: '2026-03-10T08:01:00.000Z' }),
    ]);
    const again = createSqliteTuneStore(db, 'sglang').openCampaign({
      resume: true,
      name: TEST_SPEC.name,
      spec: {},
      now: now + 3_600_000,
    });
    expect(again.activeMs).toBe(6 * 60_000);
    closeStore(db);
  });
});

describe('one word for a trial cut short: skipped (issue 19)', () => {
  it('the store, the report and the resume log say skipped, never interrupted', async () => {
    const db = openStore(':memory:');
    const world = createWorld();
    const ac = new AbortController();
    let benches = 0;
    world.beforeBench = (phase) => {
      if (phase === 'bench' && ++benches === 4) {
        ac.abort();
        throw new Error('aborted');
      }
    };
    const first = await runCampaign(
      { ...createFakeDeps(world), store: createSqliteTuneStore(db, 'sglang') },
      TEST_SPEC,
      { resume: false, restore: false },
      () => {},
      ac.signal,
    );
    world.beforeBench = undefined;
    const lines: string[] = [];
    await runCampaign(
      { ...createFakeDeps(world), store: createSqliteTuneStore(db, 'sglang') },
      TEST_SPEC,
      { resume: true, restore: false },
      (e) => {
        if (e.type === 'log') lines.push(e.message);
      },
    );
    const skipped = listTrials(db, first.campaignId).filter((t) => t.state === 'skipped');
    expect(skipped).toHaveLength(1);
    expect(skipped[0].error).toBe(
      'skipped: spectune stopped during this trial; its result is discarded and the trial redone on resume',
    );
    const row = loadReportInput(db, first.campaignId).trials.find((t) => t.seq === skipped[0].seq);
    expect(row?.error).toMatch(/^skipped: /);
    expect([...lines, skipped[0].error ?? ''].join('\n')).not.toMatch(/\binterrupted\b/);
  });
});

describe('restarts: one figure, one definition (issue 19)', () => {
  for (const winnerInForce of [true, false]) {
    it(`the tune summary and the report count the same restarts, the final deploy included (winner ${winnerInForce ? 'in force at the end' : 'deployed at the end'})`, async () => {
      const db = openStore(':memory:');
      const world = createWorld();
      const deps = createFakeDeps(world);
      const deploy = deps.service.deploy;
      // As the real port: one restart per deploy, whatever systemd's crash loop did (its NRestarts are not spectune's).
      deps.service.deploy = async (c, w, s) => {
        const o = await deploy(c, w, s);
        return { ...o, restarts: o.restarts > 0 ? 1 : 0 };
      };
      const spec = winnerInForce ? TEST_SPEC : { ...TEST_SPEC, budget: { ...TEST_SPEC.budget, maxTrials: 11 } };
      const res = await runCampaign(
        { ...deps, store: createSqliteTuneStore(db, 'sglang') },
        spec,
        { resume: false, restore: false },
        () => {},
      );
      const m = buildReportModel(loadReportInput(db, res.campaignId));
      expect(m.counts.restarts).toBe(res.restarts);
      expect(res.summary).toContain(
        `${res.restarts} restarts (spectune's deploys, rollbacks and final deploy; systemd's own restarts not counted)`,
      );
      expect(summarizeModel(m)).toContain(
        `${res.restarts} restarts (spectune's deploys, rollbacks and final deploy; systemd's own restarts not counted)`,
      );
    });
  }
});

describe('campaigns that never started a trial (issue 19)', () => {
  // Campaign 1 ran trials and was interrupted; campaign 2 died before its first trial (the service was down).
  async function storeWithDeadCampaign() {
    const db = openStore(':memory:');
    const world = createWorld();
    const ac = new AbortController();
    let benches = 0;
    world.beforeBench = (phase) => {
      if (phase === 'bench' && ++benches === 4) {
        ac.abort();
        throw new Error('aborted');
      }
    };
    const first = await runCampaign(
      { ...createFakeDeps(world), store: createSqliteTuneStore(db, 'sglang') },
      TEST_SPEC,
      { resume: false, restore: false },
      () => {},
      ac.signal,
    );
    markCampaignInterrupted(db, first.campaignId, { summary: first.summary });
    world.beforeBench = undefined;
    const down = createFakeDeps(world);
    down.service.waitHealthy = async () => ({ healthy: false, capacity: null, reason: 'unit is failed/failed' });
    await expect(
      runCampaign(
        { ...down, store: createSqliteTuneStore(db, 'sglang') },
        TEST_SPEC,
        { resume: false, restore: false },
        () => {},
      ),
    ).rejects.toThrow();
    return { db, world, first: first.campaignId };
  }

  it('a run that failed before its first trial is marked aborted, "never started", with the error', async () => {
    const { db, first } = await storeWithDeadCampaign();
    const dead = getCampaign(db, first + 1);
    expect(dead.status).toBe('aborted');
    expect(dead.summary).toMatch(/^never started: no trial ran: /);
    expect(listTrials(db, dead.id).map((t) => t.state)).toEqual(['planned']); // the baseline, never measured
    expect(getCampaign(db, first).status).toBe('interrupted');
  });

  it('report without an id shows the campaign that ran, not a newer one that never started (even one left "running" by a kill)', async () => {
    const { db, first } = await storeWithDeadCampaign();
    createCampaign(db, { name: TEST_SPEC.name, engine: 'sglang', config: {} }); // a SIGKILLed run: "running", no trial
    expect(loadReportInput(db).campaign.id).toBe(first);
    expect(loadReportInput(db, first + 2).campaign.status).toBe('running');
  });

  it('--resume goes on with the campaign that ran, and marks the newer empty ones never started', async () => {
    const { db, world, first } = await storeWithDeadCampaign();
    const killed = createCampaign(db, { name: TEST_SPEC.name, engine: 'sglang', config: {} });
    const res = await runCampaign(
      { ...createFakeDeps(world), store: createSqliteTuneStore(db, 'sglang') },
      TEST_SPEC,
      { resume: true, restore: false },
      () => {},
    );
    expect(res.campaignId).toBe(first);
    expect(res.status).toBe('done');
    expect(getCampaign(db, killed.id)).toMatchObject({ status: 'aborted', summary: 'never started: no trial ran' });
    await expect(
      runCampaign(
        { ...createFakeDeps(world), store: createSqliteTuneStore(db, 'sglang') },
        TEST_SPEC,
        { resume: true, restore: false },
        () => {},
      ),
    ).rejects.toThrow(
      new RegExp(
        `no unfinished campaign "${TEST_SPEC.name}" to resume in this store: the last one that ran, campaign ${first}, is done`,
      ),
    );
  });
});
