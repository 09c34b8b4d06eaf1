// Progress, summary and report speak of the same trials: 1-based numbers everywhere, the same verdicts (a trial
// that broke a constraint is "violates", not "ok"), and after Ctrl-C the summary names the winner the report names.
import { describe, expect, it } from 'vitest';
import { loadReportModel } from '../../src/app/report.js';
import { runCampaign } from '../../src/app/tune.js';
import { toTuneJson } from '../../src/app/tune-command.js';
import { createSqliteTuneStore, markCampaignInterrupted } from '../../src/app/tune-store.js';
import { formatEvent } from '../../src/cli/render/format.js';
import type { SpectuneEvent } from '../../src/tune/events.js';
import { listTrials, openStore } from '../../src/store/index.js';
import { createFakeDeps, createWorld, TEST_SPEC } from './tune-fakes.js';

// A spec whose constraint steps 6 and up break: output tok/s at concurrency 1 must stay <= 278.
const CONSTRAINED = {
  ...TEST_SPEC,
  constraints: [
    { metric: 'outputTokensPerSec' as const, concurrency: 1, op: '<=' as const, value: 278, relative: false },
  ],
};

describe('one numbering and one verdict for progress, summary and report', () => {
  it('every trial event carries the store seq (1-based), and a constraint-breaking trial is "violates" in progress as in the report', async () => {
    const db = openStore(':memory:');
    const events: SpectuneEvent[] = [];
    const res = await runCampaign(
      { ...createFakeDeps(createWorld()), store: createSqliteTuneStore(db, 'sglang') },
      CONSTRAINED,
      { resume: false, restore: false },
      (e) => {
        events.push(e);
      },
    );
    const rows = listTrials(db, res.campaignId);
    const starts = events.filter((e): e is Extract<SpectuneEvent, { type: 'trial:start' }> => e.type === 'trial:start');
    expect(starts[0].trial).toBe(1);
    expect(starts.map((e) => e.trial)).toEqual(rows.map((r) => r.seq));
    for (const e of starts) expect(rows.find((r) => r.seq === e.trial)?.params).toEqual(e.config);
    const phases = events.filter((e) => e.type === 'trial:phase').map((e) => (e as { trial: number }).trial);
    expect(Math.min(...phases)).toBe(1);
    const model = loadReportModel(db, res.campaignId);
    const ends = events.filter((e): e is Extract<SpectuneEvent, { type: 'trial:end' }> => e.type === 'trial:end');
    const violating = ends.filter((e) => e.status === 'violates');
    expect(violating.length).toBeGreaterThan(0);
    for (const e of violating) {
      const row = model.rows.find((r) => r.seq === e.trial)!;
      expect(row.verdict).toMatch(/^violates: outputTokensPerSec@c1 = /);
      expect(formatEvent(e)).toMatch(new RegExp(`^trial ${e.trial}: violates: outputTokensPerSec@c1 = `));
    }
    for (const e of ends.filter((x) => x.status === 'ok'))
      expect(model.rows.find((r) => r.seq === e.trial)?.verdict).toBe('ok');
    expect(model.best?.seq).toBe(res.best!.index + 1);
    // tune --json numbers the trials as progress and the report do
    const doc = toTuneJson(res);
    expect(doc.trials.map((t) => t.number)).toEqual(rows.map((r) => r.seq));
    expect(doc.best?.number).toBe(model.best?.seq);
  });

  it('after Ctrl-C the summary names the best so far, and the report names the same trial', async () => {
    const db = openStore(':memory:');
    const world = createWorld();
    const ac = new AbortController();
    let benches = 0;
    world.beforeBench = (phase) => {
      if (phase === 'bench' && ++benches === 5) {
        ac.abort();
        throw new Error('aborted');
      }
    };
    const res = await runCampaign(
      { ...createFakeDeps(world), store: createSqliteTuneStore(db, 'sglang') },
      TEST_SPEC,
      { resume: false, restore: false },
      () => {},
      ac.signal,
    );
    expect(res.status).toBe('interrupted');
    expect(res.best).not.toBeNull();
    const n = res.best!.index + 1;
    expect(res.summary).toMatch(
      new RegExp(
        `^interrupted; best so far: trial ${n} speculative_num_steps=\\d+: \\d+\\.\\d; run with --resume to continue$`,
      ),
    );
    markCampaignInterrupted(db, res.campaignId, { bestIndex: res.best!.index, summary: res.summary });
    const model = loadReportModel(db, res.campaignId);
    expect(model.best?.seq).toBe(n);
    expect(model.best?.config).toContain(`speculative_num_steps=${res.best!.config.speculative_num_steps}`);
  });
});
