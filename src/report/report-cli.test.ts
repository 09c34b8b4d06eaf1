import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { expect, it } from 'vitest';
import { run } from '../cli/commands/report.js';
import { reportError } from '../cli/exit.js';
import { captureIo, type CliIo } from '../cli/io.js';
import {
  closeStore,
  createCampaign,
  markTrialState,
  openStore,
  recordAction,
  recordTrialResult,
  recordTrialStart,
  updateCampaign,
} from '../store/index.js';

// Run the command the way main() does: errors become output and an exit code.
async function main(argv: string[], io: CliIo): Promise<number> {
  try {
    return await run(argv.slice(1), io);
  } catch (e) {
    return reportError(e, io);
  }
}

// A fake CLI io that collects output.
function fakeIo() {
  const { io, text } = captureIo();
  return { io, out: () => text.stdout, err: () => text.stderr };
}

// A store with one finished campaign: baseline, a better trial, a crash with its verdict.
function seedStore(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'spectune-report-')), 'spectune.db');
  const db = openStore(file);
  const c = createCampaign(db, {
    name: 'steps',
    engine: 'sglang',
    config: {
      keys: ['speculative_num_steps'],
      objective: { metric: 'decodeTokensPerSec.p50', concurrency: 1, goal: 'maximize' },
    },
  });
  const add = (steps: number, purpose: string, result: Parameters<typeof recordTrialResult>[2]) => {
    const t = recordTrialStart(db, {
      campaignId: c.id,
      params: { speculative_num_steps: steps },
      purpose,
      reason: `${purpose} ${steps}`,
    });
    markTrialState(db, t.id, 'running');
    return recordTrialResult(db, t.id, result);
  };
  add(1, 'baseline', { state: 'measured', objective: 123, constraintsOk: true, capacity: { maxRunningRequests: 25 } });
  const best = add(4, 'search', { state: 'measured', objective: 277, constraintsOk: true });
  add(10, 'search', {
    state: 'failed',
    verdict: {
      class: 'kv_cache_oom',
      cause: null,
      confidence: 'high',
      summary: 'KV cache does not fit',
      evidence: [{ line: 3, text: 'RuntimeError: Not enough memory' }],
      ruledOut: [],
      remediation: [],
    },
  });
  recordAction(
    db,
    { ts: new Date().toISOString(), action: 'rollback', unit: 'sglang.service', by: 'spectune' },
    { campaignId: c.id },
  );
  updateCampaign(db, c.id, { status: 'done', bestTrialId: best.id, summary: 'best steps=4' });
  closeStore(db);
  return file;
}

it('prints the latest campaign as Markdown by default', async () => {
  const db = seedStore();
  const f = fakeIo();
  const rc = await main(['report', '--db', db], f.io);
  expect(f.err()).toBe('');
  expect(rc).toBe(0);
  expect(f.out()).toContain('# spectune campaign 1: steps');
  expect(f.out()).toContain('| 2 **best** | speculative_num_steps=4 | search |');
  expect(f.out()).toContain('**kv_cache_oom** (high confidence): KV cache does not fit');
});

it('writes HTML and Markdown files when asked', async () => {
  const db = seedStore();
  const dir = mkdtempSync(join(tmpdir(), 'spectune-report-out-'));
  const f = fakeIo();
  expect(await main(['report', '1', '--db', db, '--html', join(dir, 'r.html'), '--md', join(dir, 'r.md')], f.io)).toBe(
    0,
  );
  expect(f.out()).toBe('');
  expect(readFileSync(join(dir, 'r.html'), 'utf8')).toMatch(
    /^<!doctype html>[\s\S]*<svg [\s\S]*RuntimeError: Not enough memory/,
  );
  expect(readFileSync(join(dir, 'r.md'), 'utf8')).toContain('## Timeline');
  expect(f.err()).toContain('wrote');
});

it('fails with one line for a missing store, an unknown campaign or a bad id', async () => {
  const f1 = fakeIo();
  expect(await main(['report', '--db', '/nonexistent/spectune.db'], f1.io)).toBe(1);
  expect(f1.err()).toMatch(/^spectune: no store at \/nonexistent\/spectune\.db \(hint: /);
  const f2 = fakeIo();
  expect(await main(['report', '7', '--db', seedStore()], f2.io)).toBe(1);
  expect(f2.err()).toContain('no campaign 7 in the store');
  const f3 = fakeIo();
  expect(await main(['report', 'x', '--db', seedStore()], f3.io)).toBe(2);
});

it('prints the report data as JSON under --json (the best trial, verdicts, the simulated flag)', async () => {
  const f = fakeIo();
  expect(await main(['report', '--db', seedStore(), '--json'], f.io)).toBe(0);
  const doc = JSON.parse(f.out()) as {
    campaign: { id: number };
    best: { seq: number; config: string };
    rows: { verdict: string }[];
  };
  expect(doc.campaign.id).toBe(1);
  expect(doc.best).toMatchObject({ seq: 2, config: 'speculative_num_steps=4' });
  expect(doc.rows.map((r) => r.verdict)).toEqual(['ok', 'ok', 'kv_cache_oom']);
});

it('carries the simulated flag of a demo campaign from the store into the report input', async () => {
  const { loadReportInput } = await import('../app/report.js');
  const db = openStore(':memory:');
  const sim = createCampaign(db, {
    name: 'demo',
    engine: 'sglang',
    config: { keys: ['speculative_num_steps'], simulated: true },
  });
  const real = createCampaign(db, { name: 'real', engine: 'sglang', config: { keys: ['speculative_num_steps'] } });
  expect(sim.simulated).toBe(true);
  expect(real.simulated).toBe(false);
  expect(loadReportInput(db, sim.id).campaign.simulated).toBe(true);
  expect(loadReportInput(db, real.id).campaign.simulated).toBe(false);
  closeStore(db);
});

it('never stores the password of a URL (campaign config, summary)', () => {
  const db = openStore(':memory:');
  const c = createCampaign(db, {
    name: 'c',
    engine: 'sglang',
    config: { endpoint: 'http://ops:hunter2secret@10.0.0.1:30000' },
  });
  updateCampaign(db, c.id, { summary: 'bench of http://ops:hunter2secret@10.0.0.1:30000 done' });
  const row = db.prepare('SELECT config_json, summary FROM campaigns WHERE id = ?').get(c.id) as {
    config_json: string;
    summary: string;
  };
  expect(`${row.config_json} ${row.summary}`).not.toContain('hunter2secret');
  expect(row.summary).toBe('bench of http://ops:***@10.0.0.1:30000 done');
  closeStore(db);
});

it('-c reads the store named by the config (store: relative to the config file), not ./spectune.db', async () => {
  const db = seedStore();
  const dir = mkdtempSync(join(tmpdir(), 'spectune-report-cfg-'));
  const yaml = readFileSync('examples/spectune.yaml', 'utf8').replace(/^store:.*$/m, '');
  const cfg = join(dir, 'spectune.yaml');
  writeFileSync(cfg, `${yaml}\nstore: ${relative(dir, db)}\n`);
  const f = fakeIo();
  const rc = await main(['report', '-c', cfg], f.io);
  expect(f.err()).toBe('');
  expect(rc).toBe(0);
  expect(f.out()).toContain('# spectune campaign 1: steps');
});
