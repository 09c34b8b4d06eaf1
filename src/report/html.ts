// The HTML report: one self-contained file (inline CSS and SVG, no scripts, no external URLs) that opens offline.
import { renderChartSvg } from './charts.js';
import { escapeHtml, formatNumber, formatPercent, formatTime } from './format.js';
import { summarizeModel } from './model.js';
import { renderLevelBestsHtml } from './per-concurrency.js';
import type { ReportModel, TrialRow } from './types.js';

const STYLE = `body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1100px;padding:0 16px;color:#111827}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #e5e7eb}h3{font-size:15px}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{border:1px solid #e5e7eb;padding:4px 6px;text-align:left;vertical-align:top}
th{background:#f9fafb}td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.best{background:#ecfdf5}tr.failed td{color:#b91c1c}tr.infeasible td{color:#6b7280}tr.baseline{background:#eff6ff}
.charts{display:flex;flex-wrap:wrap;gap:16px}figure{margin:0}figcaption{font-size:12px;color:#6b7280}
pre{background:#f3f4f6;padding:8px;overflow-x:auto;font-size:12px}.summary{font-size:15px}
.legend span{margin-right:12px}.ok{color:#2563eb}.violates{color:#d97706}.failed{color:#dc2626}.infeasible{color:#6b7280}
ol.timeline{font-size:13px}ol.timeline li.failure{color:#b91c1c}`;

// A table cell.
const td = (v: string, num = false) => `<td${num ? ' class="num"' : ''}>${v}</td>`;

// One row of the trials table.
function row(m: ReportModel, r: TrialRow): string {
  const cls = [r.isBest ? 'best' : '', r.isBaseline ? 'baseline' : '', r.state === 'failed' ? 'failed' : '', r.state === 'infeasible' ? 'infeasible' : ''].filter(Boolean).join(' ');
  const tag = r.isBest ? ' ★' : r.isBaseline ? ' (baseline)' : '';
  return `<tr${cls ? ` class="${cls}"` : ''}>${td(`${r.seq}${tag}`)}${td(escapeHtml(r.config))}<td title="${escapeHtml(r.reason)}">${escapeHtml(r.purpose)}</td>`
    + m.concurrencies.map((c) => td(formatNumber(r.tokPerSec[c]), true)).join('')
    + td(formatNumber(r.objective), true) + td(formatPercent(r.vsBaseline), true) + td(formatNumber(r.acceptLength, 2), true)
    + td(formatNumber(r.maxRunningRequests), true) + td(escapeHtml(r.verdict)) + '</tr>';
}

// The trials table.
function table(m: ReportModel): string {
  const head = ['#', 'config', 'purpose', ...m.concurrencies.map((c) => `tok/s @c${c}`), 'objective', 'vs baseline', 'accept len', 'max running', 'verdict'];
  return `<table><thead><tr>${head.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>${m.rows.map((r) => row(m, r)).join('')}</tbody></table>`;
}

// The diagnoses section.
function failures(m: ReportModel): string {
  if (!m.failures.length) return '<p>No trial failed.</p>';
  return m.failures.map((f) => `<section class="failure"><h3>Trial ${f.seq}: ${escapeHtml(f.config)}</h3>`
    + `<p><strong>${escapeHtml(f.class)}</strong> (${escapeHtml(f.confidence)} confidence): ${escapeHtml(f.summary)}</p>`
    + (f.evidence.length ? `<pre>${f.evidence.map((e) => `${String(e.line).padStart(5)}  ${escapeHtml(e.text)}`).join('\n')}</pre>` : '')
    + (f.remediation.length ? `<ul>${f.remediation.map((r) => `<li>${escapeHtml(r)}</li>`).join('')}</ul>` : '') + '</section>').join('');
}

// Render the whole report as one HTML document.
export function renderHtml(m: ReportModel): string {
  const charts = m.charts.map((c) => `<figure>${renderChartSvg(c)}<figcaption>${escapeHtml(c.yLabel)} against ${escapeHtml(c.key)}</figcaption></figure>`).join('');
  const legend = '<p class="legend"><span class="ok">● measured</span><span class="violates">● violates a constraint</span><span class="failed">✕ failed</span><span class="infeasible">✕ refused (predicted OOM)</span></p>';
  return `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">`
    + `<title>${escapeHtml(m.title)}</title><style>${STYLE}</style></head><body>`
    + `<h1>${escapeHtml(m.title)}</h1><p>Status <strong>${escapeHtml(m.campaign.status)}</strong>, engine ${escapeHtml(m.campaign.engine)}, objective ${escapeHtml(`${m.objective.goal} ${m.objective.metric}`)} at concurrency ${m.objective.concurrency}. Generated ${escapeHtml(formatTime(m.generatedAt))}.</p>`
    + `<p class="summary">${escapeHtml(summarizeModel(m))}</p>${m.campaign.summary ? `<blockquote>${escapeHtml(m.campaign.summary)}</blockquote>` : ''}`
    + `<h2>Trials</h2>${table(m)}${renderLevelBestsHtml(m)}<h2>Objective by parameter</h2>${legend}<div class="charts">${charts}</div>`
    + `<h2>Failures and diagnoses</h2>${failures(m)}`
    + `<h2>Timeline</h2><ol class="timeline">${m.timeline.map((e) => `<li class="${e.kind}"><time>${escapeHtml(formatTime(e.ts))}</time> ${escapeHtml(e.text)}</li>`).join('')}</ol>`
    + '</body></html>\n';
}
