import { describe, expect, it } from 'vitest';
import type { BenchRun } from '../bench/types.js';
import { buildReportModel, renderHtml, renderMarkdown } from './index.js';
import { findBestPerConcurrency } from '../tune/per-concurrency.js';
import type { TrialRecord } from '../tune/types.js';
import type { ReportInput, ReportTrial } from './types.js';

const s = (v: number) => ({ mean: v, p50: v, p90: v, p99: v });
const run = (concurrency: number, out: number): BenchRun => ({
  concurrency,
  rate: null,
  requests: { ok: 8, failed: 0 },
  durationMs: 1000,
  outputTokensPerSec: out,
  requestsPerSec: 1,
  ttftMs: s(100),
  itlMs: s(5),
  e2eMs: s(900),
  decodeTokensPerSec: s(out / concurrency),
  acceptLength: 2,
  usageFromServer: true,
  errors: { connect: 0, httpStatus: 0, firstTokenTimeout: 0, stall: 0, endedEarly: 0, other: 0 },
  engine: { before: null, after: null },
  stoppedEarly: null,
});
// A llama.cpp campaign over n-max where long drafts win for one user and lose under load (as on the GPU).
const trial = (seq: number, n: number, c1: number, c16: number, purpose = 'search'): ReportTrial => ({
  id: seq,
  seq,
  params: { spec_draft_n_max: n },
  purpose,
  reason: '',
  state: 'measured',
  objective: c1,
  constraintsOk: true,
  constraintNotes: [],
  capacity: null,
  error: null,
  startedAt: `2026-12-01T16:0${seq}:00.000Z`,
  finishedAt: `2026-12-01T16:0${seq}:30.000Z`,
  runs: [run(1, c1), run(16, c16)],
  verdicts: [],
});
const input = (): ReportInput => ({
  campaign: {
    id: 1,
    name: 'llama-good',
    status: 'done',
    engine: 'llamacpp',
    bestTrialId: 2,
    summary: null,
    createdAt: '2026-12-01T16:00:00.000Z',
    finishedAt: null,
    config: {
      keys: ['spec_draft_n_max'],
      objective: { metric: 'decodeTokensPerSec.mean', concurrency: 1, goal: 'maximize' },
    },
  },
  trials: [
    trial(1, 4, 320, 540, 'baseline'),
    trial(2, 16, 390, 500),
    trial(3, 1, 200, 560),
    trial(4, 16, 396, 510, 'soak'),
  ],
  actions: [],
  generatedAt: '2026-12-01T17:00:00.000Z',
});

describe('best config per concurrency in the report', () => {
  it('names the best config at each level, pooled over its measurements, against the baseline', () => {
    const list = buildReportModel(input()).levelBests;
    expect(list.map((b) => [b.concurrency, b.config, b.outputTokensPerSec])).toEqual([
      [1, 'spec_draft_n_max=16', 393],
      [16, 'spec_draft_n_max=1', 560],
    ]);
    expect(list[1].baseline).toBe(540);
  });

  it('ranks as the campaign summary does: a level with no answered request does not count as 0 tok/s', () => {
    const inp = input();
    const empty = trial(5, 16, 0, 0);
    empty.runs = empty.runs.map((r) => ({ ...r, outputTokensPerSec: 0, requests: { ok: 0, failed: 8 } }));
    inp.trials.push(empty);
    const list = buildReportModel(inp).levelBests;
    expect(list.map((b) => [b.concurrency, b.config, b.outputTokensPerSec])).toEqual([
      [1, 'spec_draft_n_max=16', 393],
      [16, 'spec_draft_n_max=1', 560],
    ]);
    const summary = findBestPerConcurrency(
      inp.trials.map(
        (t) =>
          ({
            index: t.seq - 1,
            kind: t.purpose === 'baseline' ? 'baseline' : 'search',
            config: t.params,
            status: 'ok',
            runs: t.runs,
          }) as unknown as TrialRecord,
      ),
    );
    expect(summary.map((b) => [b.concurrency, b.outputTokensPerSec, b.baselineOutputTokensPerSec])).toEqual(
      list.map((b) => [b.concurrency, b.outputTokensPerSec, b.baseline]),
    );
  });

  it('renders the section with the recommendation in Markdown and HTML', () => {
    const m = buildReportModel(input());
    const md = renderMarkdown(m);
    expect(md).toContain('## Best config per concurrency');
    expect(md).toContain(
      'Recommended (maximize decodeTokensPerSec.mean at concurrency 1, constraints met): spec_draft_n_max=16.',
    );
    expect(md).toContain('| 1 | spec_draft_n_max=16 | 393 | 320 | +22.8% |');
    expect(md).toContain('| 16 | spec_draft_n_max=1 | 560 | 540 | +3.7% |');
    const html = renderHtml(m);
    expect(html).toContain('<h2>Best config per concurrency</h2>');
    expect(html).toMatch(/<td class="num">16<\/td><td>spec_draft_n_max=1<\/td><td class="num">560<\/td>/);
  });

  it('says so when no config met the constraints: a soak that breaks one disqualifies the config (as on the GPU)', () => {
    const inp = input();
    inp.campaign.bestTrialId = null;
    inp.trials = inp.trials.map((t) => ({
      ...t,
      constraintsOk: t.seq === 3 ? true : t.purpose === 'soak' || t.purpose === 'baseline' ? false : t.constraintsOk,
    }));
    inp.trials = inp.trials.filter((t) => t.seq !== 3);
    const m = buildReportModel(inp);
    expect(m.best).toBeNull();
    expect(renderMarkdown(m)).toContain('No config met the objective and the constraints.');
  });
});
