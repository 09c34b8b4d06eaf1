// Sections of the HTML report that tell the operator what to do: what runs now, the flags to keep, the charts with
// their legends, and the latency table. Pure.
import { renderChartSvg } from './charts.js';
import { escapeHtml, formatNumber, formatTime } from './format.js';
import { seriesColour, renderLevelChartSvg, renderTrialChartSvg } from './trial-charts.js';
import { COLOURS } from './svg.js';
import type { LineChartModel, ReportModel } from './types.js';

// A <pre> block with a label the operator can copy from.
const codeBlock = (cls: string, text: string) => `<pre class="${cls}">${escapeHtml(text)}</pre>`;

// "What is running now": the config and the ExecStart in force on each unit when the campaign ended.
export function runningSection(m: ReportModel): string {
  const r = m.running;
  if (!r)
    return '<section id="running"><h2>What is running now</h2><p>Not recorded: the campaign did not finish (or an older spectune ran it). Run <code>spectune status</code> to see the unit.</p></section>';
  const who = r.isWinner
    ? 'the winner'
    : m.best
      ? '<strong>not the winner</strong> (see the summary for why)'
      : 'no winner was found';
  const units = r.units
    .map(
      (u) =>
        `<h3>${escapeHtml(`${u.host} ${u.unit}`)}</h3>` +
        (u.dropIn
          ? `<p>spectune's drop-in <code>${escapeHtml(u.dropInPath)}</code> is in force:</p>${codeBlock('dropin-in-force', u.dropIn.trimEnd())}`
          : `<p>The operator's own unit (no spectune drop-in) with:</p>${codeBlock('exec-in-force', `ExecStart=${u.execStart ?? '(unknown)'}`)}`),
    )
    .join('');
  return `<section id="running"><h2>What is running now</h2><p>At ${escapeHtml(formatTime(r.ts))} the service ran <strong>${escapeHtml(r.config)}</strong>, ${who}; it was ${r.healthy ? 'healthy' : '<strong class="bad">NOT healthy</strong>'}.</p>${units}</section>`;
}

// "The exact flags to keep": the winner's flags and, per unit, the ExecStart line / drop-in to put in place.
export function keepSection(m: ReportModel): string {
  const k = m.keep;
  if (!k)
    return '<section id="keep"><h2>The exact flags to keep</h2><p>No winner: keep the configuration you had.</p></section>';
  const flags = `<table class="flags"><thead><tr><th>setting</th><th>keep</th><th>before the campaign</th></tr></thead><tbody>${k.flags.map((f) => `<tr><td>${escapeHtml(f.key)}</td><td><code>${escapeHtml(f.value)}</code></td><td>${f.from ? `<code>${escapeHtml(f.from)}</code>` : '–'}</td></tr>`).join('')}</tbody></table>`;
  const units = k.units
    .map(
      (u) =>
        `<h3>${escapeHtml(`${u.host} ${u.unit}`)}</h3>` +
        `<p>The ExecStart line for the unit (your own command, only the tuned flags changed):</p>${codeBlock('keep-exec', `ExecStart=${u.execStart}`)}` +
        `<p>or as a drop-in <code>${escapeHtml(u.dropInPath)}</code> (then <code>systemctl daemon-reload</code>; remove spectune's drop-in once this is in place):</p>${codeBlock('keep-dropin', u.dropIn.trimEnd())}` +
        u.warnings.map((w) => `<p class="warn">warning: ${escapeHtml(w)}</p>`).join(''),
    )
    .join('');
  return `<section id="keep"><h2>The exact flags to keep</h2><p>The winner: <strong>${escapeHtml(k.config)}</strong>.</p>${flags}${units}${k.note ? `<p class="note">${escapeHtml(k.note)}</p>` : ''}</section>`;
}

// The legend of a per-concurrency chart: one swatch per trial, then the trials with nothing to draw and why.
function levelLegend(c: LineChartModel): string {
  const items = c.series
    .map((s, i) => {
      const colour = seriesColour(s, i);
      const style = s.violates ? 'dotted' : s.role === 'baseline' ? 'dashed' : 'solid';
      return `<li class="${s.role}"><span class="swatch" style="border-top:${s.role === 'best' ? 4 : 3}px ${style} ${colour}"></span>${escapeHtml(s.label)}${s.violates ? ' (violates a constraint)' : ''}</li>`;
    })
    .join('');
  const missing = c.notPlotted.length
    ? `<ul class="not-plotted">${c.notPlotted.map((n) => `<li>✕ not plotted: ${escapeHtml(n)}</li>`).join('')}</ul>`
    : '';
  return `<ul class="series-legend">${items}</ul>${missing}`;
}

// Every chart: objective by trial, the per-concurrency charts, and the objective by tuned parameter.
export function chartsSection(m: ReportModel): string {
  const legend = `<p class="legend"><span style="color:${COLOURS.best}">★ winner</span><span style="color:${COLOURS.ok}">■ measured</span><span style="color:${COLOURS.violates}">■ violates a constraint</span><span style="color:${COLOURS.failed}">✕ failed (verdict written on the chart)</span><span style="color:${COLOURS.infeasible}">✕ refused: predicted not to fit</span></p>`;
  const trial = `<figure id="chart-trials"><figcaption>${escapeHtml(m.trialChart.title)}</figcaption>${renderTrialChartSvg(m.trialChart)}</figure>`;
  const [objective, ...latency] = m.levelCharts;
  const level = (c: LineChartModel) =>
    `<figure id="chart-${escapeHtml(c.id)}"><figcaption>${escapeHtml(c.title)}</figcaption>${renderLevelChartSvg(c)}${levelLegend(c)}</figure>`;
  const params = m.charts
    .map(
      (c) =>
        `<figure id="chart-param-${escapeHtml(c.key)}"><figcaption>${escapeHtml(c.yLabel)} against ${escapeHtml(c.key)}</figcaption>${renderChartSvg(c)}</figure>`,
    )
    .join('');
  return (
    `<section id="charts"><h2>Charts</h2><p class="axes-note">Every y axis starts at zero.</p>${legend}${trial}` +
    `<h3>Objective by concurrency and by tuned parameter</h3><div class="grid">${objective ? level(objective) : ''}${params}</div>` +
    `<h3>Latency by concurrency</h3><div class="grid">${latency.map(level).join('')}</div></section>`
  );
}

// Latency figures (TTFT, ITL, E2E at p50 and p99) of every measured trial at every level.
export function latencySection(m: ReportModel): string {
  if (!m.latency.length) return '<section id="latency"><h2>Latency</h2><p>No trial was measured.</p></section>';
  const head = [
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
  const num = (v: number | null) => `<td class="num">${formatNumber(v)}</td>`;
  const rows = m.latency
    .map(
      (r) =>
        `<tr${r.isBest ? ' class="best"' : ''}><td>${r.seq}${r.isBest ? ' ★' : ''}</td><td>${escapeHtml(r.config)}</td><td class="num">${r.concurrency}</td>` +
        [r.tokPerSec, r.ttftP50, r.ttftP99, r.itlP50, r.itlP99, r.e2eP50, r.e2eP99].map(num).join('') +
        '</tr>',
    )
    .join('');
  return `<section id="latency"><h2>Latency</h2><table class="latency"><thead><tr>${head.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>${rows}</tbody></table></section>`;
}
