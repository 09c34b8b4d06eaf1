import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { BenchRun, RequestSample } from '../bench/types.js';
import type { Verdict } from '../diagnose/index.js';
import {
  closeStore,
  createCampaign,
  findUnfinishedTrial,
  getTrialConfig,
  latestCampaign,
  listActions,
  listBenchRuns,
  listSamples,
  listTrials,
  listVerdicts,
  markTrialState,
  MIGRATIONS,
  openStore,
  recordAction,
  recordTrialResult,
  recordTrialStart,
  updateCampaign,
  type Db,
} from './index.js';

const open: Db[] = [];
const store = (path = ':memory:') => {
  const db = openStore(path);
  open.push(db);
  return db;
};
afterEach(() => {
  open.splice(0).forEach(closeStore);
});
const tmp = () => join(mkdtempSync(join(tmpdir(), 'spectune-store-')), 'spectune.db');

const summary = (p50: number) => ({ mean: p50, p50, p90: p50, p99: p50 });
const run = (concurrency: number, tps: number): BenchRun => ({
  concurrency,
  rate: null,
  requests: { ok: 4, failed: 0 },
  durationMs: 1000,
  outputTokensPerSec: tps,
  requestsPerSec: 1,
  ttftMs: summary(100),
  itlMs: summary(5),
  e2eMs: summary(900),
  decodeTokensPerSec: summary(tps),
  acceptLength: 3.2,
  usageFromServer: true,
  errors: { connect: 0, httpStatus: 0, firstTokenTimeout: 0, stall: 0, endedEarly: 0, other: 0 },
  engine: { before: null, after: null },
  stoppedEarly: null,
});
const sample: RequestSample = {
  id: 'bench-1',
  concurrency: 1,
  ok: true,
  errorPhase: null,
  error: null,
  startMs: 0,
  ttftMs: 80,
  e2eMs: 900,
  outputTokens: 256,
  inputTokens: 512,
  decodeTokensPerSec: 277,
};

describe('openStore', () => {
  it('creates a WAL database at the latest schema version, and reopening is idempotent', () => {
    const file = tmp();
    const db = store(file);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    createCampaign(db, { name: 'c', engine: 'sglang', config: {} });
    closeStore(db);
    const again = store(file);
    expect(again.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    expect(latestCampaign(again)?.name).toBe('c');
  });

  it('refuses a store written by a newer spectune', () => {
    const file = tmp();
    const raw = new Database(file);
    raw.pragma('user_version = 99');
    raw.close();
    expect(() => openStore(file)).toThrow(expect.objectContaining({ code: 'E_STORE' }));
  });
});

describe('trials', () => {
  it('walks the state machine and stores the results', () => {
    const db = store();
    const c = createCampaign(db, {
      name: 'steps',
      engine: 'sglang',
      config: { search: { strategy: 'adaptive' } },
      baseline: { speculative_num_steps: 1 },
    });
    const t = recordTrialStart(db, {
      campaignId: c.id,
      params: { speculative_num_steps: 4 },
      purpose: 'climb',
      reason: 'climb steps 3 → 4',
      config: { execStart: '/usr/bin/python -m sglang.launch_server --speculative-num-steps 4' },
    });
    expect(t).toMatchObject({ seq: 1, state: 'planned' });
    markTrialState(db, t.id, 'deploying');
    markTrialState(db, t.id, 'running');
    const verdict: Verdict = {
      class: 'unknown',
      cause: null,
      confidence: 'low',
      summary: 's',
      evidence: [{ line: 1, text: 'x' }],
      ruledOut: [],
      remediation: [],
    };
    const done = recordTrialResult(db, t.id, {
      state: 'measured',
      objective: 277,
      constraintsOk: true,
      runs: [run(1, 277), run(16, 900)],
      samples: [sample],
      capacity: { maxRunningRequests: 16 },
      verdict,
    });
    expect(done).toMatchObject({
      state: 'measured',
      objective: 277,
      constraintsOk: true,
      capacity: { maxRunningRequests: 16 },
    });
    expect(done.finishedAt).not.toBeNull();
    expect(listBenchRuns(db, t.id).map((r) => r.outputTokensPerSec)).toEqual([277, 900]);
    expect(listSamples(db, t.id)).toEqual([sample]);
    expect(listVerdicts(db, t.id)[0].evidence).toEqual([{ line: 1, text: 'x' }]);
    expect(getTrialConfig(db, done)?.execStart).toContain('--speculative-num-steps 4');
    expect(() => recordTrialResult(db, t.id, { state: 'failed' })).toThrow(/cannot go from measured to failed/);
  });

  it('finds the trial left running by a crash (SIGKILL between start and result)', () => {
    const file = tmp();
    const db = store(file);
    const c = createCampaign(db, { name: 'c', engine: 'sglang', config: {} });
    const a = recordTrialStart(db, {
      campaignId: c.id,
      params: { speculative_num_steps: 1 },
      purpose: 'baseline',
      reason: 'baseline',
    });
    markTrialState(db, a.id, 'running');
    recordTrialResult(db, a.id, { state: 'measured', objective: 123 });
    const b = recordTrialStart(db, {
      campaignId: c.id,
      params: { speculative_num_steps: 2 },
      purpose: 'climb',
      reason: 'r',
    });
    markTrialState(db, b.id, 'running');
    closeStore(db);
    const after = store(file);
    expect(findUnfinishedTrial(after, c.id)).toMatchObject({
      id: b.id,
      state: 'running',
      params: { speculative_num_steps: 2 },
    });
    expect(listTrials(after, c.id).map((t) => t.state)).toEqual(['measured', 'running']);
    recordTrialResult(after, b.id, { state: 'failed', error: 'interrupted' });
    expect(findUnfinishedTrial(after, c.id)).toBeNull();
  });

  it('rolls back a result whose write fails half-way', () => {
    const db = store();
    const c = createCampaign(db, { name: 'c', engine: 'vllm', config: {} });
    const t = recordTrialStart(db, { campaignId: c.id, params: {}, purpose: 'baseline', reason: 'r' });
    markTrialState(db, t.id, 'running');
    const broken = { ...sample, startMs: null as unknown as number };
    expect(() => recordTrialResult(db, t.id, { state: 'measured', objective: 1, samples: [broken] })).toThrow();
    expect(findUnfinishedTrial(db, c.id)?.state).toBe('running');
  });
});

describe('redaction and the action log', () => {
  it('never stores secrets', () => {
    const db = store();
    const c = createCampaign(db, {
      name: 'c',
      engine: 'sglang',
      config: { target: { apiKey: 'sk-abcdefghijklmnopqrstu' } },
    });
    const t = recordTrialStart(db, {
      campaignId: c.id,
      params: {},
      purpose: 'baseline',
      reason: 'r',
      config: { execStart: 'python -m sglang.launch_server --api-key hunter2secret' },
    });
    recordAction(
      db,
      {
        ts: '2026-03-09T22:28:00Z',
        action: 'restart',
        unit: 'sglang-qwen.service',
        by: 'spectune',
        why: 'HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz',
      },
      { campaignId: c.id, trialId: t.id },
    );
    const dump =
      JSON.stringify(db.prepare('SELECT * FROM campaigns').all()) +
      JSON.stringify(db.prepare('SELECT * FROM configs').all()) +
      JSON.stringify(listActions(db));
    expect(dump).not.toMatch(/sk-abc|hunter2secret|hf_abc/);
    expect(listActions(db, { campaignId: c.id })).toEqual([
      {
        ts: '2026-03-09T22:28:00Z',
        action: 'restart',
        unit: 'sglang-qwen.service',
        by: 'spectune',
        why: 'HF_TOKEN=***',
        trialId: t.id,
      },
    ]);
    expect(listActions(db, { since: '2026-03-10T00:00:00Z' })).toEqual([]);
  });

  it('updates campaign status and marks finish time once', () => {
    const db = store();
    const c = createCampaign(db, { name: 'c', engine: 'sglang', config: {}, ts: '2026-01-01T00:00:00Z' });
    const d = updateCampaign(db, c.id, { status: 'done', summary: 'best steps=4', ts: '2026-01-01T01:00:00Z' });
    expect(d).toMatchObject({ status: 'done', summary: 'best steps=4', finishedAt: '2026-01-01T01:00:00Z' });
    expect(() => updateCampaign(db, 99, {})).toThrow(expect.objectContaining({ code: 'E_CAMPAIGN_NOT_FOUND' }));
  });

  it("keeps the end state (what runs, the operator's own ExecStart) redacted, and keeps it across later updates", () => {
    const db = store();
    const c = createCampaign(db, { name: 'c', engine: 'sglang', config: {} });
    expect(c.endState).toBeNull();
    const exec = 'python -m sglang.launch_server --api-key hunter2secret --speculative-num-steps 3';
    const unit = {
      host: 'gpu1',
      unit: 'sglang.service',
      operatorExecStart: exec,
      execStart: exec.replace('3', '4'),
      dropInPath: '/etc/systemd/system/sglang.service.d/90-spectune.conf',
      dropIn: null,
    };
    updateCampaign(db, c.id, {
      status: 'done',
      endState: { ts: '2026-01-01T01:00:00Z', settings: { speculative_num_steps: 4 }, healthy: true, units: [unit] },
    });
    const d = updateCampaign(db, c.id, { summary: 'later' });
    expect(d.endState).toEqual({
      ts: '2026-01-01T01:00:00Z',
      settings: { speculative_num_steps: 4 },
      healthy: true,
      units: [
        {
          ...unit,
          operatorExecStart: exec.replace('hunter2secret', '***'),
          execStart: exec.replace('hunter2secret', '***').replace('3', '4'),
        },
      ],
    });
    expect(JSON.stringify(db.prepare('SELECT * FROM campaigns').all())).not.toContain('hunter2secret');
  });
});
