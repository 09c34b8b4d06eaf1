// "Best config per concurrency" section of the report: where speculation pays depends on load, so next to the
// campaign's recommendation (objective + constraints) the report names the best measured config at each level
// (by output tok/s, a config's measurements pooled) and how it compares with the baseline. Pure.
import { configKey } from '../search/index.js';
import { rankBestPerConcurrency } from '../tune/per-concurrency.js';
import { escapeCell, escapeHtml, formatNumber, formatPercent } from './format.js';
import type { LevelBest, ReportModel, ReportTrial } from './types.js';

export type { LevelBest } from './types.js';

// The best config per concurrency level of the measured trials, ranked as the campaign summary ranks them
// (tune/per-concurrency.ts); `format` writes a config as the trials table does.
export function buildLevelBests(
  trials: ReportTrial[],
  baseline: ReportTrial | null,
  concurrencies: number[],
  format: (params: ReportTrial['params']) => string,
): LevelBest[] {
  const baseKey = baseline ? configKey(baseline.params) : null;
  const measured = trials
    .filter((t) => t.state === 'measured')
    .map((t) => ({ config: t.params, runs: t.runs, baseline: configKey(t.params) === baseKey }));
  return rankBestPerConcurrency(measured)
    .filter((b) => concurrencies.includes(b.concurrency))
    .map((b) => ({
      concurrency: b.concurrency,
      config: format(b.config),
      outputTokensPerSec: b.outputTokensPerSec,
      baseline: b.baselineOutputTokensPerSec,
      vsBaseline: b.vsBaseline,
    }));
}

// The recommendation sentence: the campaign's winner under its objective and constraints.
function recommendation(m: ReportModel): string {
  return m.best
    ? `Recommended (${m.objective.goal} ${m.objective.metric} at concurrency ${m.objective.concurrency}, constraints met): ${m.best.config}.`
    : 'No config met the objective and the constraints.';
}

// Markdown lines of the section (empty when only one level was measured).
export function renderLevelBestsMarkdown(m: ReportModel): string[] {
  const list = m.levelBests;
  if (list.length < 2) return [];
  return [
    '## Best config per concurrency',
    '',
    recommendation(m),
    '',
    '| concurrency | best config (output tok/s) | tok/s | baseline tok/s | vs baseline |',
    '|---|---|---|---|---|',
    ...list.map(
      (b) =>
        `| ${b.concurrency} | ${escapeCell(b.config)} | ${formatNumber(b.outputTokensPerSec)} | ${formatNumber(b.baseline)} | ${formatPercent(b.vsBaseline)} |`,
    ),
    '',
  ];
}

// HTML of the section ('' when only one level was measured).
export function renderLevelBestsHtml(m: ReportModel): string {
  const list = m.levelBests;
  if (list.length < 2) return '';
  const cell = (v: string, num = false) => `<td${num ? ' class="num"' : ''}>${v}</td>`;
  const rows = list
    .map(
      (b) =>
        `<tr>${cell(String(b.concurrency), true)}${cell(escapeHtml(b.config))}${cell(formatNumber(b.outputTokensPerSec), true)}${cell(formatNumber(b.baseline), true)}${cell(formatPercent(b.vsBaseline), true)}</tr>`,
    )
    .join('');
  return `<h2>Best config per concurrency</h2><p>${escapeHtml(recommendation(m))}</p><table><thead><tr><th>concurrency</th><th>best config (output tok/s)</th><th>tok/s</th><th>baseline tok/s</th><th>vs baseline</th></tr></thead><tbody>${rows}</tbody></table>`;
}
