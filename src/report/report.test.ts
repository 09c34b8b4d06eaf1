import { describe, expect, it } from 'vitest';
import type { BenchRun } from '../bench/types.js';
import type { Verdict } from '../diagnose/index.js';
import {
  buildReportModel,
  isSimulated,
  renderChartText,
  renderHtml,
  renderLevelChartSvg,
  renderMarkdown,
  renderTrialChartSvg,
  SIMULATED_TEXT,
  type ReportInput,
  type ReportTrial,
} from './index.js';
import { zeroScale } from './svg.js';
import { redactText } from '../redact.js';

// A seed-like campaign as report input (steps 1..10 on SGLang; steps=10 crash-loops on an init OOM).
const s = (v: number) => ({ mean: v, p50: v, p90: v, p99: v });
// A bench run at one level.
function run(concurrency: number, tps: number, accept: number | null = 3.4): BenchRun {
  return {
    concurrency,
    rate: null,
    requests: { ok: 16, failed: 0 },
    durationMs: 10_000,
    outputTokensPerSec: tps,
    requestsPerSec: 1,
    ttftMs: s(120),
    itlMs: s(4),
    e2eMs: s(900),
    decodeTokensPerSec: s(concurrency === 1 ? tps : tps / concurrency),
    acceptLength: accept,
    usageFromServer: true,
    errors: { connect: 0, httpStatus: 0, firstTokenTimeout: 0, stall: 0, endedEarly: 0, other: 0 },
    engine: { before: null, after: null },
    stoppedEarly: null,
  };
}

const OOM: Verdict = {
  class: 'crash_loop',
  cause: 'kv_cache_oom',
  confidence: 'high',
  summary: 'every start dies allocating the KV cache: RuntimeError: Not enough memory',
  evidence: [
    { line: 41, text: 'RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.' },
    { line: 57, text: 'sglang-qwen.service: Main process exited, code=exited, status=1/FAILURE' },
  ],
  ruledOut: [{ class: 'stop_timeout', why: 'no stop was in progress' }],
  remediation: [
    {
      text: 'lower cuda_graph_max_bs (graphs grow with batch × draft tokens)',
      setting: 'cuda_graph_max_bs',
      direction: 'decrease',
    },
  ],
};

let id = 100;
// One trial; minutes after 22:00 give the timeline its order.
function trial(
  seq: number,
  steps: number,
  state: string,
  objective: number | null,
  extra: Partial<ReportTrial> = {},
): ReportTrial {
  const minute = String(seq * 3).padStart(2, '0');
  return {
    id: ++id,
    seq,
    params: { speculative_num_steps: steps },
    purpose: seq === 1 ? 'baseline' : 'search',
    reason: `climb to ${steps}`,
    state,
    objective,
    constraintsOk: state === 'measured' ? true : null,
    constraintNotes: [],
    capacity: state === 'measured' ? { maxRunningRequests: 25 - steps * 2 } : null,
    error: null,
    startedAt: `2026-03-09T22:${minute}:00.000Z`,
    finishedAt: `2026-03-09T22:${minute}:30.000Z`,
    runs: state === 'measured' && objective !== null ? [run(1, objective), run(16, objective * 6)] : [],
    verdicts: [],
    ...extra,
  };
}

// The campaign.
function seedCampaign(): ReportInput {
  const trials = [
    trial(1, 1, 'measured', 123),
    trial(2, 2, 'measured', 186),
    trial(3, 4, 'measured', 277),
    trial(4, 8, 'measured', 279, {
      constraintsOk: false,
      constraintNotes: ['outputTokensPerSec@16 700 < 776 (90% of baseline)'],
    }),
    trial(5, 5, 'measured', 282),
    trial(6, 10, 'failed', null, {
      verdicts: [OOM],
      reason: 'probe: probe speculative_num_steps=10 beyond the plateau',
    }),
    trial(7, 9, 'infeasible', null),
    trial(8, 4, 'measured', 276, { purpose: 'soak' }),
  ];
  return {
    campaign: {
      id: 3,
      name: 'sglang-qwen steps',
      status: 'done',
      engine: 'sglang',
      bestTrialId: trials[2].id,
      summary: 'best speculative_num_steps=4',
      config: {
        keys: ['speculative_num_steps'],
        objective: { metric: 'decodeTokensPerSec.p50', concurrency: 1, goal: 'maximize' },
      },
      createdAt: '2026-03-09T22:00:00.000Z',
      finishedAt: '2026-03-09T22:40:00.000Z',
    },
    trials,
    actions: [
      {
        ts: '2026-03-09T22:18:40.000Z',
        action: 'rollback',
        unit: 'sglang-qwen.service',
        by: 'spectune',
        why: 'trial 6 crash-looped',
      },
    ],
    generatedAt: '2026-03-09T23:00:00.000Z',
  };
}

describe('buildReportModel', () => {
  const m = buildReportModel(seedCampaign());

  it('builds the trials table with tok/s per level, % vs baseline, acceptance, max running and verdicts', () => {
    expect(m.concurrencies).toEqual([1, 16]);
    const r3 = m.rows[2];
    expect(r3).toMatchObject({
      seq: 3,
      config: 'speculative_num_steps=4',
      objective: 277,
      acceptLength: 3.4,
      maxRunningRequests: 17,
      verdict: 'ok',
      isBest: true,
    });
    expect(r3.tokPerSec).toEqual({ 1: 277, 16: 1662 });
    expect(r3.vsBaseline).toBeCloseTo(277 / 123 - 1);
    expect(m.rows[0]).toMatchObject({ isBaseline: true, vsBaseline: 0 });
    expect(m.rows[3].verdict).toBe('violates: outputTokensPerSec@16 700 < 776 (90% of baseline)');
    expect(m.rows[5].verdict).toBe('crash_loop (kv_cache_oom)');
    expect(m.rows[6].verdict).toBe('predicted OOM (not deployed)');
    const wrong = buildReportModel({
      ...seedCampaign(),
      trials: [trial(1, 1, 'measured', 123), trial(2, 10, 'failed', null, { verdicts: [OOM], predictionWrong: true })],
    });
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
    expect(
      m.timeline.some(
        (e) => e.kind === 'action' && e.text === 'rollback sglang-qwen.service by spectune: trial 6 crash-looped',
      ),
    ).toBe(true);
    expect(m.failures).toEqual([
      {
        seq: 6,
        config: 'speculative_num_steps=10',
        class: 'crash_loop (kv_cache_oom)',
        confidence: 'high',
        summary: OOM.summary,
        evidence: OOM.evidence,
        remediation: ['lower cuda_graph_max_bs (graphs grow with batch × draft tokens)'],
      },
    ]);
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
    expect(md).toContain(
      '| # | config | purpose | tok/s @c1 | tok/s @c16 | objective | vs baseline | accept len | max running | verdict |',
    );
    expect(md).toContain(
      '| 3 **best** | speculative_num_steps=4 | search | 277 | 1662 | 277 | +125.2% | 3.40 | 17 | ok |',
    );
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

  it('contains the table, the charts (one per tuned parameter) with the failure marked, and the diagnosis', () => {
    expect(html.match(/<svg class="chart param"/g)).toHaveLength(1);
    expect(html.match(/<svg class="chart trials"/g)).toHaveLength(1);
    expect(html.match(/<svg class="chart levels /g)).toHaveLength(5);
    expect(html.match(/<h2>Trials<\/h2><table><thead>.*?<tbody>(.*?)<\/tbody>/s)?.[1].match(/<tr/g)).toHaveLength(8);
    expect(html).toContain('class="pt failed"');
    expect(html).toContain('class="pt infeasible"');
    expect(html).toContain('<strong class="verdict">crash_loop (kv_cache_oom)</strong>');
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

// The seed campaign as the store keeps it after the end: the unit ran the winner through spectune's drop-in.
const OPERATOR_EXEC =
  '/usr/bin/python3 -m sglang.launch_server --model-path Qwen/Qwen3.5-122B-A10B-FP8 --tp-size 2 --speculative-algorithm EAGLE --speculative-num-steps 1 --port 30000';
function endedCampaign(execStart = OPERATOR_EXEC): ReportInput {
  const input = seedCampaign();
  const inForce = execStart.replace('--speculative-num-steps 1', '--speculative-num-steps 4');
  input.campaign.endState = {
    ts: '2026-03-09T22:40:00.000Z',
    settings: { speculative_num_steps: 4 },
    healthy: true,
    units: [
      {
        host: 'gpu1',
        unit: 'sglang-qwen.service',
        operatorExecStart: execStart,
        execStart: inForce,
        dropInPath: '/etc/systemd/system/sglang-qwen.service.d/90-spectune.conf',
        dropIn: `[Service]\nExecStart=\nExecStart=${inForce}\n`,
      },
    ],
  };
  return input;
}

describe('what is running now and the flags to keep', () => {
  it("patches the winner into the operator's own ExecStart, every other byte kept", () => {
    const m = buildReportModel(endedCampaign());
    expect(m.running).toMatchObject({ config: 'speculative_num_steps=4', healthy: true, isWinner: true });
    expect(m.keep?.flags).toEqual([
      {
        key: 'speculative_num_steps',
        flag: '--speculative-num-steps',
        value: '--speculative-num-steps 4',
        from: '--speculative-num-steps 1',
      },
    ]);
    const u = m.keep!.units[0];
    expect(u.execStart).toBe(OPERATOR_EXEC.replace('--speculative-num-steps 1', '--speculative-num-steps 4'));
    expect(u.dropInPath).toBe('/etc/systemd/system/sglang-qwen.service.d/override.conf');
    expect(u.dropIn).toBe(`[Service]\nExecStart=\nExecStart=${u.execStart}\n`);
    expect(m.keep!.note).toBeNull();
    const md = renderMarkdown(m);
    expect(md).toContain(`## The exact flags to keep`);
    expect(md).toContain(`\`\`\`\nExecStart=${u.execStart}\n\`\`\``);
    expect(md).toContain('| speculative_num_steps | `--speculative-num-steps 4` | `--speculative-num-steps 1` |');
  });

  it('says when the unit does not run the winner, and falls back to the flags when the store has no unit', () => {
    const input = endedCampaign();
    input.campaign.endState!.settings = { speculative_num_steps: 1 };
    expect(buildReportModel(input).running?.isWinner).toBe(false);
    const old = buildReportModel(seedCampaign());
    expect(old.running).toBeNull();
    expect(old.keep?.units).toEqual([]);
    expect(old.keep?.note).toMatch(/^The store has no copy of the unit/);
    expect(renderHtml(old)).toContain('Not recorded: the campaign did not finish');
  });

  it('puts an environment reference where a redacted secret was (never a literal *** in the block), and says when the winner changes nothing', () => {
    const m = buildReportModel(endedCampaign(`${OPERATOR_EXEC} --api-key ***`));
    expect(m.keep!.units[0].execStart).toMatch(/--speculative-num-steps 4 --port 30000 --api-key \$\{API_KEY\}$/);
    expect(m.keep!.units[0].dropIn).not.toContain('***');
    expect(m.keep!.units[0].warnings).toEqual([
      "${API_KEY} stands for the unit's secret (reports never carry secrets): keep your own value there, or put API_KEY=<your key> in the unit's EnvironmentFile=",
    ]);
    const md = renderMarkdown(m);
    expect(md).toContain('--api-key ${API_KEY}');
    expect(md).not.toMatch(/--api-key \*\*\*/);
    const same = endedCampaign();
    same.campaign.bestTrialId = same.trials[0].id;
    expect(buildReportModel(same).keep?.note).toBe(
      'The winner is the configuration the unit had before the campaign: there is nothing to change.',
    );
  });

  it("keeps the operator's own environment reference (--api-key ${SGLANG_API_KEY}) in the block", () => {
    const m = buildReportModel(endedCampaign(redactText(`${OPERATOR_EXEC} --api-key \${SGLANG_API_KEY}`)));
    expect(m.keep!.units[0].execStart).toMatch(/--port 30000 --api-key \$\{SGLANG_API_KEY\}$/);
    expect(m.keep!.units[0].warnings).toEqual([]);
    expect(renderMarkdown(m)).toContain('--api-key ${SGLANG_API_KEY}');
    expect(redactText('--api-key sk-live-0123456789abcdef --token "$TOK"')).toBe('--api-key *** --token "$TOK"');
  });

  it('names a unit whose ExecStart cannot be patched instead of printing a wrong line', () => {
    const m = buildReportModel(endedCampaign('/opt/run-sglang.sh'));
    expect(m.keep?.units).toEqual([]);
    expect(m.keep?.note).toMatch(/^gpu1 sglang-qwen\.service: /);
  });
});

describe('isSimulated', () => {
  it("follows the store's flag, else the engine command or the demo unit", () => {
    const c = seedCampaign().campaign;
    expect(isSimulated(c)).toBe(false);
    expect(isSimulated(endedCampaign().campaign)).toBe(false);
    expect(
      isSimulated(
        endedCampaign('/usr/bin/node /opt/spectune/bin/spectune.js sim --sim-profile p --speculative-num-steps 1')
          .campaign,
      ),
    ).toBe(true);
    expect(isSimulated({ ...c, name: 'local:spectune-demo-sim.service' })).toBe(true);
    expect(isSimulated({ ...c, name: 'local:spectune-demo-sim.service', simulated: false })).toBe(false);
    expect(isSimulated({ ...c, simulated: true })).toBe(true);
  });

  it("follows the engine's own info: a trial whose /server_info said simulated: true marks the campaign SIMULATED", () => {
    const seed = seedCampaign();
    const trials = seed.trials.map((t, i) =>
      i === 0 ? { ...t, capacity: { maxRunningRequests: 17, simulated: true } } : t,
    );
    expect(isSimulated(seed.campaign, seed.trials)).toBe(false);
    expect(isSimulated(seed.campaign, trials)).toBe(true);
    expect(renderMarkdown(buildReportModel({ ...seed, trials }))).toContain(`> **${SIMULATED_TEXT}**`);
  });

  it('names every host and rank of the target at the top of both reports', () => {
    const seed = seedCampaign();
    const hosts = [
      { host: 'th2', unit: 'u.service', role: 'rank1' },
      { host: 'th1', unit: 'u.service', role: 'rank0' },
    ];
    const m = buildReportModel({
      ...seed,
      campaign: { ...seed.campaign, config: { ...seed.campaign.config, target: { hosts } } },
    });
    expect(m.targets).toEqual([
      { rank: 0, host: 'th1', unit: 'u.service' },
      { rank: 1, host: 'th2', unit: 'u.service' },
    ]);
    expect(renderMarkdown(m)).toContain('Target: rank 0 th1 u.service, rank 1 th2 u.service.');
    expect(renderHtml(m)).toContain('Target: rank 0 th1 u.service, rank 1 th2 u.service.');
    expect(renderMarkdown(buildReportModel(seed))).toContain('Target: not recorded.');
  });

  it('writes SIMULATED at the top of both reports and in the HTML print footer, and nowhere for a real campaign', () => {
    const sim = buildReportModel({ ...seedCampaign(), campaign: { ...seedCampaign().campaign, simulated: true } });
    expect(renderMarkdown(sim).startsWith(`> **${SIMULATED_TEXT}**\n`)).toBe(true);
    const html = renderHtml(sim);
    expect(html).toContain(`<title>SIMULATED — `);
    expect(html).toContain(`<p class="simulated-banner" id="simulated">SIMULATED — `);
    expect(html).toMatch(/<div class="print-footer">SIMULATED campaign — /);
    expect(html).toMatch(/@media print\{[^@]*\.print-footer\{display:block;position:fixed;bottom:0/);
    const real = buildReportModel(seedCampaign());
    expect(renderHtml(real)).not.toContain('SIMULATED');
    expect(renderMarkdown(real)).not.toContain('SIMULATED');
  });
});

describe('per-trial charts and latency figures', () => {
  const m = buildReportModel(seedCampaign());

  it('charts the objective of every trial with the winner starred and the failures with their verdicts', () => {
    expect(m.trialChart.bars.map((b) => [b.seq, b.y, b.status, b.isBest, b.verdict])).toEqual([
      [1, 123, 'ok', false, null],
      [2, 186, 'ok', false, null],
      [3, 277, 'ok', true, null],
      [4, 279, 'violates', false, null],
      [5, 282, 'ok', false, null],
      [6, null, 'failed', false, 'crash_loop (kv_cache_oom)'],
      [7, null, 'infeasible', false, 'predicted OOM (not deployed)'],
      [8, 276, 'ok', false, null],
    ]);
    const svg = renderTrialChartSvg(m.trialChart);
    expect(svg.match(/class="winner"/g)).toHaveLength(1);
    expect(svg).toMatch(/<g class="bar failed" data-seq="6">.*>crash_loop \(kv_cache_oom\)<\/text>/);
  });

  it('draws the objective metric, TTFT and ITL (mean and p99) against concurrency, a line per trial', () => {
    expect(m.levelCharts.map((c) => [c.id, c.yLabel])).toEqual([
      ['objective', 'tok/s per request, p50'],
      ['ttft-mean', 'TTFT mean (ms)'],
      ['ttft-p99', 'TTFT p99 (ms)'],
      ['itl-mean', 'ITL mean (ms)'],
      ['itl-p99', 'ITL p99 (ms)'],
    ]);
    const obj = m.levelCharts[0];
    expect(obj.xs).toEqual([1, 16]);
    expect(obj.series.map((s) => `${s.label}:${s.role}:${s.violates}`)).toEqual([
      'trial 1 (baseline):baseline:false',
      'trial 2:other:false',
      'trial 3 ★ winner:best:false',
      'trial 4:other:true',
      'trial 5:other:false',
      'trial 8:other:false',
    ]);
    expect(obj.series[2].points).toEqual([
      { x: 1, y: 277 },
      { x: 16, y: 1662 / 16 },
    ]);
    expect(obj.notPlotted).toEqual([
      `trial 6 failed: crash_loop (kv_cache_oom), high confidence — ${OOM.summary}`,
      'trial 7 infeasible: predicted OOM (not deployed)',
    ]);
    for (const c of m.levelCharts) expect(renderLevelChartSvg(c)).toContain('>★ winner (trial 3)</text>');
  });

  it('starts every y axis at zero, with round ticks above the largest value', () => {
    const html = renderHtml(m);
    const svgs = html.match(/<svg class="chart[\s\S]*?<\/svg>/g) ?? [];
    expect(svgs).toHaveLength(7);
    for (const svg of svgs) {
      const ticks = [...svg.matchAll(/<text class="ytick" x="[\d.]+" y="([\d.]+)"[^>]*>([\d.]+)<\/text>/g)].map(
        (t) => ({ y: Number(t[1]), v: Number(t[2]) }),
      );
      const axis = Number(/<line class="axis x" x1="\d+" y1="([\d.]+)"/.exec(svg)?.[1]);
      expect(ticks[0]).toEqual({ y: axis + 4, v: 0 });
      expect(ticks.length).toBeGreaterThanOrEqual(3);
      expect(ticks.length).toBeLessThanOrEqual(8);
    }
    expect(zeroScale([282, 123])).toMatchObject({ max: 350, step: 50 });
    expect(zeroScale([0.31])).toMatchObject({ max: 0.35, step: 0.05 });
    expect(zeroScale([])).toMatchObject({ max: 1 });
  });

  it('puts TTFT, ITL and E2E at p50 and p99 of every trial and level in a table', () => {
    expect(m.latency).toHaveLength(12);
    expect(m.latency[4]).toEqual({
      seq: 3,
      config: 'speculative_num_steps=4',
      concurrency: 1,
      isBest: true,
      tokPerSec: 277,
      ttftP50: 120,
      ttftP99: 120,
      itlP50: 4,
      itlP99: 4,
      e2eP50: 900,
      e2eP99: 900,
    });
    expect(renderMarkdown(m)).toContain('| 3 ★ | speculative_num_steps=4 | 1 | 277 | 120 | 120 | 4 | 4 | 900 | 900 |');
    expect(renderHtml(m)).toContain('<th>E2E p99 (ms)</th>');
  });
});
