import { describe, expect, it } from 'vitest';
import type { BenchRun } from '../bench/types.js';
import type { Verdict } from '../diagnose/types.js';
import { buildReportModel, renderChartText, renderHtml, renderMarkdown, type ReportInput, type ReportTrial } from './index.js';

// A seed-like campaign as report input (steps 1..10 on SGLang; steps=10 crash-loops on an init OOM).
const s = (v: number) => ({ mean: v, p50: v, p90: v, p99: v });
// A bench run at one level.
function run(concurrency: number, tps: number, accept: number | null = 3.4): BenchRun {
  return {
    concurrency, rate: null, requests: { ok: 16, failed: 0 }, durationMs: 10_000, outputTokensPerSec: tps, requestsPerSec: 1,
    ttftMs: s(120), itlMs: s(4), e2eMs: s(900), decodeTokensPerSec: s(concurrency === 1 ? tps : tps / concurrency), acceptLength: accept,
    usageFromServer: true, errors: { connect: 0, httpStatus: 0, firstTokenTimeout: 0, stall: 0, endedEarly: 0, other: 0 },
    engine: { before: null, after: null }, stoppedEarly: null,
  };
}

const OOM: Verdict = {
  class: 'crash_loop', cause: 'kv_cache_oom', confidence: 'high',
  summary: 'every start dies allocating the KV cache: RuntimeError: Not enough memory',
  evidence: [
    { line: 41, text: 'RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.' },
    { line: 57, text: "sglang-qwen.service: Main process exited, code=exited, status=1/FAILURE" },
  ],
  ruledOut: [{ class: 'stop_timeout', why: 'no stop was in progress' }],
  remediation: [{ text: 'lower cuda_graph_max_bs (graphs grow with batch × draft tokens)', setting: 'cuda_graph_max_bs', direction: 'decrease' }],
};

let id = 100;
// One trial; minutes after 22:00 give the timeline its order.
function trial(seq: number, steps: number, state: string, objective: number | null, extra: Partial<ReportTrial> = {}): ReportTrial {
  const minute = String(seq * 3).padStart(2, '0');
  return {
    id: ++id, seq, params: { speculative_num_steps: steps }, purpose: seq === 1 ? 'baseline' : 'search', reason: `climb to ${steps}`, state, objective,
    constraintsOk: state === 'measured' ? true : null, constraintNotes: [], capacity: state === 'measured' ? { maxRunningRequests: 25 - steps * 2 } : null,
    error: null, startedAt: `2026-03-09T22:${minute}:00.000Z`, finishedAt: `2026-03-09T22:${minute}:30.000Z`,
    runs: state === 'measured' && objective !== null ? [run(1, objective), run(16, objective * 6)] : [], verdicts: [], ...extra,
  };
}

// The campaign.
function seedCampaign(): ReportInput {
  const trials = [
    trial(1, 1, 'measured', 123), trial(2, 2, 'measured', 186), trial(3, 4, 'measured', 277), trial(4, 8, 'measured', 279, { constraintsOk: false, constraintNotes: ['outputTokensPerSec@16 700 < 776 (90% of baseline)'] }),
    trial(5, 5, 'measured', 282), trial(6, 10, 'failed', null, { verdicts: [OOM], reason: 'probe: probe speculative_num_steps=10 beyond the plateau' }),
    trial(7, 9, 'infeasible', null), trial(8, 4, 'measured', 276, { purpose: 'soak' }),
  ];
  return {
    campaign: {
      id: 3, name: 'sglang-qwen steps', status: 'done', engine: 'sglang', bestTrialId: trials[2].id, summary: 'best speculative_num_steps=4',
      config: { keys: ['speculative_num_steps'], objective: { metric: 'decodeTokensPerSec.p50', concurrency: 1, goal: 'maximize' } },
      createdAt: '2026-03-09T22:00:00.000Z', finishedAt: '2026-03-09T22:40:00.000Z',
    },
    trials,
    actions: [{ ts: '2026-03-09T22:18:40.000Z', action: 'rollback', unit: 'sglang-qwen.service', by: 'spectune', why: 'trial 6 crash-looped' }],
    generatedAt: '2026-03-09T23:00:00.000Z',
  };
}


describe('buildReportModel', () => {
  const m = buildReportModel(seedCampaign());

  it('builds the trials table with tok/s per level, % vs baseline, acceptance, max running and verdicts', () => {
    expect(m.concurrencies).toEqual([1, 16]);
    const r3 = m.rows[2];
    expect(r3).toMatchObject({ seq: 3, config: 'speculative_num_steps=4', objective: 277, acceptLength: 3.4, maxRunningRequests: 17, verdict: 'ok', isBest: true });
    expect(r3.tokPerSec).toEqual({ 1: 277, 16: 1662 });
    expect(r3.vsBaseline).toBeCloseTo(277 / 123 - 1);
    expect(m.rows[0]).toMatchObject({ isBaseline: true, vsBaseline: 0 });
    expect(m.rows[3].verdict).toBe('violates: outputTokensPerSec@16 700 < 776 (90% of baseline)');
    expect(m.rows[5].verdict).toBe('crash_loop (kv_cache_oom)');
    expect(m.rows[6].verdict).toBe('predicted OOM (not deployed)');
    const wrong = buildReportModel({ ...seedCampaign(), trials: [trial(1, 1, 'measured', 123), trial(2, 10, 'failed', null, { verdicts: [OOM], predictionWrong: true })] });
    expect(wrong.rows[1].verdict).toBe('crash_loop (kv_cache_oom); memory prediction was wrong');
    expect(m.best?.seq).toBe(3);
    expect(m.rows[5].purpose).toBe('probe');
    expect(m.rows[1].purpose).toBe('search');
  });

  it('charts the objective per parameter with failures marked', () => {
    expect(m.charts).toHaveLength(1);
    const statuses = m.charts[0].points.map((p) => `${String(p.x)}:${p.status}`);
    expect(statuses).toEqual(['1:ok', '2:ok', '4:ok', '8:violates', '5:ok', '10:failed', '9:infeasible', '4:ok']);
    expect(renderChartText(m.charts[0]).split('\n')).toContain('10 │✕  failed');
  });

  it('orders the timeline and keeps every failure with its evidence', () => {
    const ts = m.timeline.map((e) => e.ts);
    expect([...ts].sort()).toEqual(ts);
    expect(m.timeline.some((e) => e.kind === 'action' && e.text === 'rollback sglang-qwen.service by spectune: trial 6 crash-looped')).toBe(true);
    expect(m.failures).toEqual([{
      seq: 6, config: 'speculative_num_steps=10', class: 'crash_loop (kv_cache_oom)', confidence: 'high', summary: OOM.summary,
      evidence: OOM.evidence, remediation: ['lower cuda_graph_max_bs (graphs grow with batch × draft tokens)'],
    }]);
    expect(m.counts).toEqual({ trials: 8, measured: 6, failed: 1, infeasible: 1, restarts: 7 });
  });

  it('falls back to the best usable measurement and the default objective', () => {
    const input = seedCampaign();
    input.campaign.bestTrialId = null;
    input.campaign.config = {};
    const fb = buildReportModel(input);
    expect(fb.best?.seq).toBe(5);
    expect(fb.objective).toEqual({ metric: 'decodeTokensPerSec.p50', concurrency: 1, goal: 'maximize' });
    expect(fb.keys).toEqual(['speculative_num_steps']);
  });
});

describe('renderMarkdown', () => {
  it('renders the table, charts, diagnoses and timeline', () => {
    const md = renderMarkdown(buildReportModel(seedCampaign()));
    expect(md).toContain('| # | config | purpose | tok/s @c1 | tok/s @c16 | objective | vs baseline | accept len | max running | verdict |');
    expect(md).toContain('| 3 **best** | speculative_num_steps=4 | search | 277 | 1662 | 277 | +125.2% | 3.40 | 17 | ok |');
    expect(md).toContain('**crash_loop (kv_cache_oom)** (high confidence)');
    expect(md).toContain('   41  RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.');
    expect(md).toMatch(/- 2026-03-09 22:18:30 \*\*failure\*\* trial 6 failed: crash_loop/);
  });

  it('redacts secrets that reached the store anyway', () => {
    const input = seedCampaign();
    input.trials[5].verdicts = [{ ...OOM, summary: 'launch_server --api-key hunter2secret died' }];
    expect(renderMarkdown(buildReportModel(input))).not.toContain('hunter2secret');
  });
});

// Tags of an HTML document, checked for nesting (our own output only: no comments, no raw text elements but style).
function checkNesting(html: string): string[] {
  const VOID = new Set(['meta', 'br', 'hr', 'img', 'input', 'link']);
  const SELF = /\/>$/;
  const stack: string[] = [];
  const body = html.replace(/<style>[\s\S]*?<\/style>/, '<style></style>').replace(/^<!doctype html>\n/, '');
  for (const m of body.matchAll(/<\/?([a-zA-Z][a-zA-Z0-9]*)\b[^>]*>/g)) {
    const [tag, name] = [m[0], m[1].toLowerCase()];
    if (VOID.has(name) || SELF.test(tag)) continue;
    if (tag.startsWith('</')) {
      if (stack.pop() !== name) throw new Error(`misnested </${name}> at ${m.index}`);
    } else stack.push(name);
  }
  return stack;
}

describe('renderHtml', () => {
  const html = renderHtml(buildReportModel(seedCampaign()));

  it('is one well-formed, self-contained document that opens offline', () => {
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(checkNesting(html)).toEqual([]);
    expect(html).not.toMatch(/<script|<link|<img|<iframe|\bsrc=|\bhref=|url\(|https?:\/\//i);
  });

  it('contains the table, one inline SVG per parameter with the failure marked, and the diagnosis', () => {
    expect(html.match(/<svg /g)).toHaveLength(1);
    expect(html.match(/<tbody>.*?<\/tbody>/s)?.[0].match(/<tr/g)).toHaveLength(8);
    expect(html).toContain('class="pt failed"');
    expect(html).toContain('class="pt infeasible"');
    expect(html).toContain('<strong>crash_loop (kv_cache_oom)</strong>');
    expect(html).toContain('RuntimeError: Not enough memory');
  });

  it('escapes text that looks like markup', () => {
    const input = seedCampaign();
    input.trials.push(trial(9, 3, 'failed', null, { error: '<script>alert(1)</script>' }));
    const out = renderHtml(buildReportModel(input));
    expect(out).not.toContain('<script>');
    expect(out).toContain('&lt;script&gt;');
  });
});
