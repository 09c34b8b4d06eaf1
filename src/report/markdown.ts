// The Markdown report: summary, trials table, text charts, diagnoses and the timeline. Pure.
import { renderChartText } from './charts.js';
import { escapeCell, formatNumber, formatPercent, formatTime } from './format.js';
import { keepLines, latencyLines, levelLines, renderTrialChartText, runningLines } from './markdown-sections.js';
import { SIMULATED_TEXT, describeTargets, summarizeModel } from './model.js';
import { renderLevelBestsMarkdown } from './per-concurrency.js';
import type { ReportModel, TrialRow } from './types.js';

// Header and separator of the trials table.
function tableHead(m: ReportModel): string[] {
  const cols = [
    '#',
    'config',
    'purpose',
    ...m.concurrencies.map((c) => `tok/s @c${c}`),
    'objective',
    'vs baseline',
    'accept len',
    'max running',
    'verdict',
  ];
  return [`| ${cols.join(' | ')} |`, `|${cols.map(() => '---').join('|')}|`];
}

// One table row.
function tableRow(m: ReportModel, r: TrialRow): string {
  const tag = r.isBest ? ' **best**' : r.isBaseline ? ' (baseline)' : '';
  const cells = [
    `${r.seq}${tag}`,
    escapeCell(r.config),
    escapeCell(r.purpose),
    ...m.concurrencies.map((c) => formatNumber(r.tokPerSec[c])),
    formatNumber(r.objective),
    formatPercent(r.vsBaseline),
    formatNumber(r.acceptLength, 2),
    formatNumber(r.maxRunningRequests),
    escapeCell(r.verdict),
  ];
  return `| ${cells.join(' | ')} |`;
}

// The diagnoses section.
function failures(m: ReportModel): string[] {
  if (!m.failures.length) return ['No trial failed.'];
  return m.failures.flatMap((f) => [
    `### Trial ${f.seq}: ${escapeCell(f.config)}`,
    '',
    `**${f.class}** (${f.confidence} confidence): ${escapeCell(f.summary)}`,
    '',
    ...(f.evidence.length
      ? ['```', ...f.evidence.map((e) => `${String(e.line).padStart(5)}  ${e.text}`), '```', '']
      : []),
    ...f.remediation.map((r) => `- ${escapeCell(r)}`),
    ...(f.remediation.length ? [''] : []),
  ]);
}

// Render the whole report as Markdown.
export function renderMarkdown(m: ReportModel): string {
  const out = [
    ...(m.simulated ? [`> **${SIMULATED_TEXT}**`, ''] : []),
    `# ${escapeCell(m.title)}`,
    '',
    `Status **${m.campaign.status}**, engine ${m.campaign.engine}, objective ${m.objective.goal} ${m.objective.metric} at concurrency ${m.objective.concurrency}. Generated ${formatTime(m.generatedAt)}.`,
    '',
    `Target: ${escapeCell(describeTargets(m))}.`,
    '',
    summarizeModel(m),
    '',
    ...(m.campaign.summary ? [`> ${escapeCell(m.campaign.summary)}`, ''] : []),
    ...runningLines(m),
    ...keepLines(m),
    '## Objective by trial',
    '',
    '```',
    renderTrialChartText(m.trialChart),
    '```',
    '',
    '## Trials',
    '',
    ...tableHead(m),
    ...m.rows.map((r) => tableRow(m, r)),
    '',
    ...latencyLines(m),
    ...levelLines(m),
    ...renderLevelBestsMarkdown(m),
    '## Objective by parameter',
    '',
    ...m.charts.flatMap((c) => ['```', renderChartText(c), '```', '']),
    '## Failures and diagnoses',
    '',
    ...failures(m),
    '## Timeline',
    '',
    ...m.timeline.map(
      (e) => `- ${formatTime(e.ts)} ${e.kind === 'failure' ? '**failure** ' : ''}${escapeCell(e.text)}`,
    ),
    '',
  ];
  return `${out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}
