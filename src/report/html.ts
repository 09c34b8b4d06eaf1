// The HTML report: one self-contained file (inline CSS and SVG, no scripts, no external URLs) that opens offline.
import { escapeHtml, formatNumber, formatPercent, formatTime } from './format.js';
import { chartsSection, keepSection, latencySection, runningSection } from './html-sections.js';
import { SIMULATED_TEXT, describeTargets, summarizeModel } from './model.js';
import { renderLevelBestsHtml } from './per-concurrency.js';
import type { ReportModel, TrialRow } from './types.js';

const STYLE = `body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1180px;padding:0 20px;color:#111827}
h1{font-size:24px;margin:8px 0}h2{font-size:19px;margin-top:32px;border-bottom:1px solid #e5e7eb}h3{font-size:16px;margin:18px 0 6px}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{border:1px solid #e5e7eb;padding:4px 6px;text-align:left;vertical-align:top}
th{background:#f9fafb}td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.best{background:#ecfdf5}tr.failed td{color:#b91c1c}tr.infeasible td{color:#6b7280}tr.baseline{background:#eff6ff}
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(480px,1fr));gap:24px}figure{margin:0 0 12px;max-width:720px}
figcaption{font-size:14px;font-weight:600;margin-bottom:4px}svg.chart{display:block;max-width:100%;height:auto;background:#fff}
pre{background:#f3f4f6;padding:8px 10px;overflow-x:auto;font-size:12.5px;white-space:pre-wrap;word-break:break-all}code{font-size:13px}
.summary{font-size:16px}.legend span{margin-right:14px}.bad{color:#b91c1c}.warn,.note{color:#92400e}
ul.series-legend{list-style:none;padding:0;margin:4px 0;display:flex;flex-wrap:wrap;gap:4px 14px;font-size:12.5px}
ul.series-legend li.best{font-weight:700;color:#15803d}.swatch{display:inline-block;width:22px;margin-right:5px;vertical-align:middle}
ul.not-plotted{font-size:12.5px;color:#b91c1c;margin:4px 0;padding-left:18px}
section.failure{border-left:4px solid #dc2626;padding-left:10px;margin:12px 0}
.simulated-banner{border:3px solid #b91c1c;background:#fef2f2;color:#991b1b;font-weight:700;font-size:18px;padding:10px 14px;letter-spacing:.02em}
.print-footer{display:none}
ol.timeline{font-size:13px}ol.timeline li.failure{color:#b91c1c}
@page{margin:14mm 12mm 18mm}
@media print{body{max-width:none;margin:0;padding:0 0 12mm}.grid{display:block}figure{max-width:165mm}figure,section.failure,pre{break-inside:avoid}
.print-footer{display:block;position:fixed;bottom:0;left:0;right:0;text-align:center;font-size:11px;color:#991b1b;font-weight:700;background:#fff;border-top:1px solid #fca5a5;padding:2px 0}}`;

// A table cell.
const td = (v: string, num = false) => `<td${num ? ' class="num"' : ''}>${v}</td>`;

// One row of the trials table.
function row(m: ReportModel, r: TrialRow): string {
  const cls = [
    r.isBest ? 'best' : '',
    r.isBaseline ? 'baseline' : '',
    r.state === 'failed' ? 'failed' : '',
    r.state === 'infeasible' ? 'infeasible' : '',
  ]
    .filter(Boolean)
    .join(' ');
  const tag = r.isBest ? ' ★' : r.isBaseline ? ' (baseline)' : '';
  return (
    `<tr${cls ? ` class="${cls}"` : ''}>${td(`${r.seq}${tag}`)}${td(escapeHtml(r.config))}<td title="${escapeHtml(r.reason)}">${escapeHtml(r.purpose)}</td>` +
    m.concurrencies.map((c) => td(formatNumber(r.tokPerSec[c]), true)).join('') +
    td(formatNumber(r.objective), true) +
    td(formatPercent(r.vsBaseline), true) +
    td(formatNumber(r.acceptLength, 2), true) +
    td(formatNumber(r.maxRunningRequests), true) +
    td(escapeHtml(r.verdict)) +
    '</tr>'
  );
}

// The trials table.
function table(m: ReportModel): string {
  const head = [
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
  return `<table><thead><tr>${head.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead><tbody>${m.rows.map((r) => row(m, r)).join('')}</tbody></table>`;
}

// The diagnoses section: class (and cause), confidence, the one-line summary, evidence and remediation.
function failures(m: ReportModel): string {
  if (!m.failures.length) return '<p>No trial failed.</p>';
  return m.failures
    .map(
      (f) =>
        `<section class="failure" id="failure-${f.seq}"><h3>Trial ${f.seq}: ${escapeHtml(f.config)}</h3>` +
        `<p><strong class="verdict">${escapeHtml(f.class)}</strong> (<span class="confidence">${escapeHtml(f.confidence)}</span> confidence): <span class="verdict-summary">${escapeHtml(f.summary)}</span></p>` +
        (f.evidence.length
          ? `<pre>${f.evidence.map((e) => `${String(e.line).padStart(5)}  ${escapeHtml(e.text)}`).join('\n')}</pre>`
          : '') +
        (f.remediation.length ? `<ul>${f.remediation.map((r) => `<li>${escapeHtml(r)}</li>`).join('')}</ul>` : '') +
        '</section>',
    )
    .join('');
}

// The SIMULATED header and print footer, or nothing for a real campaign.
function simulatedMarks(m: ReportModel): { banner: string; footer: string } {
  if (!m.simulated) return { banner: '', footer: '' };
  return {
    banner: `<p class="simulated-banner" id="simulated">${escapeHtml(SIMULATED_TEXT)}</p>`,
    footer: `<div class="print-footer">${escapeHtml(`SIMULATED campaign — ${m.title}`)}</div>`,
  };
}

// Render the whole report as one HTML document: what to do first (what runs, what to keep), then the evidence.
export function renderHtml(m: ReportModel): string {
  const sim = simulatedMarks(m);
  return (
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">` +
    `<title>${m.simulated ? 'SIMULATED — ' : ''}${escapeHtml(m.title)}</title><style>${STYLE}</style></head><body>${sim.footer}` +
    `<header>${sim.banner}<h1>${escapeHtml(m.title)}</h1><p>Status <strong>${escapeHtml(m.campaign.status)}</strong>, engine ${escapeHtml(m.campaign.engine)}, objective ${escapeHtml(`${m.objective.goal} ${m.objective.metric}`)} at concurrency ${m.objective.concurrency}. Generated ${escapeHtml(formatTime(m.generatedAt))}.</p><p class="targets">Target: ${escapeHtml(describeTargets(m))}.</p></header>` +
    `<p class="summary">${escapeHtml(summarizeModel(m))}</p>${m.campaign.summary ? `<blockquote>${escapeHtml(m.campaign.summary)}</blockquote>` : ''}` +
    runningSection(m) +
    keepSection(m) +
    chartsSection(m) +
    `<h2>Trials</h2>${table(m)}${renderLevelBestsHtml(m)}` +
    latencySection(m) +
    `<h2>Failures and diagnoses</h2>${failures(m)}` +
    `<h2>Timeline</h2><ol class="timeline">${m.timeline.map((e) => `<li class="${e.kind}"><time>${escapeHtml(formatTime(e.ts))}</time> ${escapeHtml(e.text)}</li>`).join('')}</ol>` +
    '</body></html>\n'
  );
}
