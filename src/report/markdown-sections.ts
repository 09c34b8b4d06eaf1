// Sections of the Markdown report that match the HTML one: what runs now, the flags to keep, the objective of each
// trial as text bars, the per-concurrency figures and the latency table. Pure.
import { escapeCell, formatNumber, formatTime } from './format.js';
import type { BarChartModel, LineChartModel, ReportModel } from './types.js';

// Width of a text bar at the largest value.
const BAR_WIDTH = 30;

// A fenced block.
const fence = (text: string) => ['```', text.trimEnd(), '```', ''];

// "What is running now".
export function runningLines(m: ReportModel): string[] {
  const r = m.running;
  const head = ['## What is running now', ''];
  if (!r)
    return [
      ...head,
      'Not recorded: the campaign did not finish (or an older spectune ran it). Run `spectune status` to see the unit.',
      '',
    ];
  const who = r.isWinner
    ? 'the winner'
    : m.best
      ? '**not the winner** (see the summary for why)'
      : 'no winner was found';
  return [
    ...head,
    `At ${formatTime(r.ts)} the service ran **${escapeCell(r.config)}**, ${who}; it was ${r.healthy ? 'healthy' : '**NOT healthy**'}.`,
    '',
    ...r.units.flatMap((u) => [
      `### ${u.host} ${u.unit}`,
      '',
      ...(u.dropIn
        ? [`spectune's drop-in \`${u.dropInPath}\` is in force:`, '', ...fence(u.dropIn)]
        : [
            "The operator's own unit (no spectune drop-in) with:",
            '',
            ...fence(`ExecStart=${u.execStart ?? '(unknown)'}`),
          ]),
    ]),
  ];
}

// "The exact flags to keep".
export function keepLines(m: ReportModel): string[] {
  const k = m.keep;
  const head = ['## The exact flags to keep', ''];
  if (!k) return [...head, 'No winner: keep the configuration you had.', ''];
  return [
    ...head,
    `The winner: **${escapeCell(k.config)}**.`,
    '',
    '| setting | keep | before the campaign |',
    '|---|---|---|',
    ...k.flags.map(
      (f) => `| ${escapeCell(f.key)} | \`${escapeCell(f.value)}\` | ${f.from ? `\`${escapeCell(f.from)}\`` : '–'} |`,
    ),
    '',
    ...k.units.flatMap((u) => [
      `### ${u.host} ${u.unit}`,
      '',
      'The ExecStart line for the unit (your own command, only the tuned flags changed):',
      '',
      ...fence(`ExecStart=${u.execStart}`),
      `or as a drop-in \`${u.dropInPath}\` (then \`systemctl daemon-reload\`; remove spectune's drop-in once this is in place):`,
      '',
      ...fence(u.dropIn),
      ...u.warnings.map((w) => `warning: ${escapeCell(w)}`),
    ]),
    ...(k.note ? [k.note, ''] : []),
  ];
}

// The objective of each trial as text bars: winner starred, failures with their verdict.
export function renderTrialChartText(c: BarChartModel): string {
  const top = Math.max(0, ...c.bars.map((b) => b.y ?? 0)) || 1;
  const width = Math.max(...c.bars.map((b) => String(b.seq).length), 1);
  const lines = c.bars.map((b) => {
    const head = `${String(b.seq).padStart(width)} │`;
    if (b.y === null) return `${head}✕ ${b.verdict ?? b.status}`;
    const tag = b.isBest
      ? '  ★ winner'
      : b.isBaseline
        ? '  (baseline)'
        : b.status === 'violates'
          ? '  violates a constraint'
          : '';
    return `${head}${'█'.repeat(Math.max(1, Math.round((b.y / top) * BAR_WIDTH)))} ${formatNumber(b.y)}${tag}`;
  });
  return [`${c.title}, ${c.yLabel}; the bars start at zero`, ...lines].join('\n');
}

// One per-concurrency chart as a table: a row per trial, a column per level.
function levelTable(c: LineChartModel): string[] {
  const rows = c.series.map((s) => {
    const at = (x: number) => formatNumber(s.points.find((p) => p.x === x)?.y ?? null);
    return `| ${escapeCell(s.label)}${s.violates ? ' (violates)' : ''} | ${c.xs.map(at).join(' | ')} |`;
  });
  return [
    `### ${c.title}: ${c.yLabel}`,
    '',
    `| trial | ${c.xs.map((x) => `c=${x}`).join(' | ')} |`,
    `|---|${c.xs.map(() => '---:').join('|')}|`,
    ...rows,
    '',
    ...c.notPlotted.map((n) => `- ✕ not plotted: ${escapeCell(n)}`),
    ...(c.notPlotted.length ? [''] : []),
  ];
}

// The per-concurrency figures (objective metric, TTFT and ITL mean/p99).
export function levelLines(m: ReportModel): string[] {
  return ['## By concurrency', '', ...m.levelCharts.flatMap(levelTable)];
}

// Latency figures of every measured trial at every level.
export function latencyLines(m: ReportModel): string[] {
  if (!m.latency.length) return ['## Latency', '', 'No trial was measured.', ''];
  const cols = [
    'trial',
    'config',
    'concurrency',
    'output tok/s',
    'TTFT p50 (ms)',
    'TTFT p99 (ms)',
    'ITL p50 (ms)',
    'ITL p99 (ms)',
    'E2E p50 (ms)',
    'E2E p99 (ms)',
  ];
  return [
    '## Latency',
    '',
    `| ${cols.join(' | ')} |`,
    `|${cols.map((_, i) => (i < 2 ? '---' : '---:')).join('|')}|`,
    ...m.latency.map(
      (r) =>
        `| ${r.seq}${r.isBest ? ' ★' : ''} | ${escapeCell(r.config)} | ${r.concurrency} | ${[r.tokPerSec, r.ttftP50, r.ttftP99, r.itlP50, r.itlP99, r.e2eP50, r.e2eP99].map((v) => formatNumber(v)).join(' | ')} |`,
    ),
    '',
  ];
}
