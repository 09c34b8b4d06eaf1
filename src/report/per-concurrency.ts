// "Best config per concurrency" section of the report: where speculation pays depends on load, so next to the
// campaign's recommendation (objective + constraints) the report names the best measured config at each level
// (by output tok/s, a config's measurements pooled) and how it compares with the baseline. Pure.
import { escapeCell, escapeHtml, formatNumber, formatPercent } from './format.js';
import type { ReportModel } from './types.js';

/** The best measured config at one concurrency level. */
export interface LevelBest {
  concurrency: number;
  config: string;
  outputTokensPerSec: number;
  baseline: number | null;
  vsBaseline: number | null;
}

// Mean of numbers.
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

// The best config per concurrency level, from the measured rows of the trials table.
export function buildLevelBests(m: ReportModel): LevelBest[] {
  return m.concurrencies.flatMap((c) => {
    const byConfig = new Map<string, number[]>();
    for (const r of m.rows.filter((x) => x.state === 'measured' && typeof x.tokPerSec[c] === 'number')) {
      byConfig.set(r.config, [...(byConfig.get(r.config) ?? []), r.tokPerSec[c] as number]);
    }
    const ranked = [...byConfig].map(([config, xs]) => ({ config, out: mean(xs) })).sort((a, b) => b.out - a.out);
    if (!ranked.length) return [];
    const base = m.baseline ? ranked.find((x) => x.config === m.baseline?.config) ?? null : null;
    return [{ concurrency: c, config: ranked[0].config, outputTokensPerSec: ranked[0].out, baseline: base?.out ?? null, vsBaseline: base && base.out > 0 ? ranked[0].out / base.out - 1 : null }];
  });
}

// The recommendation sentence: the campaign's winner under its objective and constraints.
function recommendation(m: ReportModel): string {
  return m.best ? `Recommended (${m.objective.goal} ${m.objective.metric} at concurrency ${m.objective.concurrency}, constraints met): ${m.best.config}.` : 'No config met the objective and the constraints.';
}

// Markdown lines of the section (empty when only one level was measured).
export function renderLevelBestsMarkdown(m: ReportModel): string[] {
  const list = buildLevelBests(m);
  if (list.length < 2) return [];
  return ['## Best config per concurrency', '', recommendation(m), '', '| concurrency | best config (output tok/s) | tok/s | baseline tok/s | vs baseline |', '|---|---|---|---|---|',
    ...list.map((b) => `| ${b.concurrency} | ${escapeCell(b.config)} | ${formatNumber(b.outputTokensPerSec)} | ${formatNumber(b.baseline)} | ${formatPercent(b.vsBaseline)} |`), ''];
}

// HTML of the section ('' when only one level was measured).
export function renderLevelBestsHtml(m: ReportModel): string {
  const list = buildLevelBests(m);
  if (list.length < 2) return '';
  const cell = (v: string, num = false) => `<td${num ? ' class="num"' : ''}>${v}</td>`;
  const rows = list.map((b) => `<tr>${cell(String(b.concurrency), true)}${cell(escapeHtml(b.config))}${cell(formatNumber(b.outputTokensPerSec), true)}${cell(formatNumber(b.baseline), true)}${cell(formatPercent(b.vsBaseline), true)}</tr>`).join('');
  return `<h2>Best config per concurrency</h2><p>${escapeHtml(recommendation(m))}</p><table><thead><tr><th>concurrency</th><th>best config (output tok/s)</th><th>tok/s</th><th>baseline tok/s</th><th>vs baseline</th></tr></thead><tbody>${rows}</tbody></table>`;
}
