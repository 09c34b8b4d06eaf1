// Charts of the objective against each tuned parameter: inline SVG for HTML, text bars for Markdown. Pure.
import type { ParamValue } from '../engines/types.js';
import { escapeHtml, formatNumber } from './format.js';
import type { ChartModel, ChartPoint } from './types.js';

/** Chart geometry (px): wide enough for 10-20 x values, short enough for several charts per screen. */
const W = 560;
const H = 240;
const PAD = { left: 56, right: 16, top: 28, bottom: 44 };
// Failures sit on a band below the lowest measurement so they are visible next to the values they bound.
const FAIL_BAND = 14;
/** Marker colours: measured, violates a constraint, failed to start/run, refused as infeasible. */
const COLOURS = { ok: '#2563eb', violates: '#d97706', failed: '#dc2626', infeasible: '#6b7280' } as const;
// Width of a Markdown text bar at the largest value.
const BAR_WIDTH = 30;

// Distinct x values in axis order (numbers sorted; other values in order of appearance).
export function axisOf(chart: ChartModel): ParamValue[] {
  const xs = [...new Set(chart.points.map((p) => p.x))];
  return chart.numeric ? (xs as number[]).sort((a, b) => a - b) : xs;
}

// Median of the measured values at one x, or null.
function medianAt(points: ChartPoint[], x: ParamValue): number | null {
  const ys = points.filter((p) => p.x === x && p.y !== null && p.status !== 'failed').map((p) => p.y as number).sort((a, b) => a - b);
  if (!ys.length) return null;
  const m = Math.floor(ys.length / 2);
  return ys.length % 2 ? ys[m] : (ys[m - 1] + ys[m]) / 2;
}

// Scales from values to pixels.
function scales(chart: ChartModel, xs: ParamValue[]) {
  const ys = chart.points.filter((p) => p.y !== null).map((p) => p.y as number);
  const lo = ys.length ? Math.min(...ys) : 0;
  const hi = ys.length ? Math.max(...ys) : 1;
  const span = hi - lo || Math.abs(hi) || 1;
  const y0 = lo - span * 0.1;
  const y1 = hi + span * 0.1;
  const plotH = H - PAD.top - PAD.bottom - FAIL_BAND;
  const nums = xs as number[];
  const xmin = chart.numeric ? Math.min(...nums) : 0;
  const xmax = chart.numeric ? Math.max(...nums) : xs.length - 1;
  const xspan = xmax - xmin || 1;
  const sx = (x: ParamValue) => PAD.left + ((chart.numeric ? (x as number) - xmin : xs.indexOf(x)) / xspan) * (W - PAD.left - PAD.right);
  const sy = (y: number) => PAD.top + (1 - (y - y0) / (y1 - y0)) * plotH;
  return { sx, sy, y0, y1, failY: H - PAD.bottom - FAIL_BAND / 2 };
}

// The marker of one point.
function marker(p: ChartPoint, px: number, py: number): string {
  const x = Math.round(px * 10) / 10;
  const y = Math.round(py * 10) / 10;
  const tip = `<title>trial ${p.seq}: ${escapeHtml(String(p.x))} → ${p.y === null ? p.status : formatNumber(p.y)}${p.status === 'violates' ? ' (violates a constraint)' : ''}</title>`;
  if (p.status === 'failed' || p.status === 'infeasible') {
    const dash = p.status === 'infeasible' ? ' stroke-dasharray="2 2"' : '';
    return `<g class="pt ${p.status}" stroke="${COLOURS[p.status]}" stroke-width="2"${dash}><line x1="${x - 5}" y1="${y - 5}" x2="${x + 5}" y2="${y + 5}"/><line x1="${x - 5}" y1="${y + 5}" x2="${x + 5}" y2="${y - 5}"/>${tip}</g>`;
  }
  return `<circle class="pt ${p.status}" cx="${x.toFixed(1)}" cy="${y.toFixed(1)}" r="4" fill="${COLOURS[p.status]}">${tip}</circle>`;
}

// Axes, ticks and labels.
function axes(chart: ChartModel, xs: ParamValue[], s: ReturnType<typeof scales>): string {
  const out = [`<line x1="${PAD.left}" y1="${H - PAD.bottom}" x2="${W - PAD.right}" y2="${H - PAD.bottom}" stroke="#9ca3af"/>`,
    `<line x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${H - PAD.bottom}" stroke="#9ca3af"/>`];
  for (const x of xs) out.push(`<text x="${s.sx(x).toFixed(1)}" y="${H - PAD.bottom + 16}" text-anchor="middle" font-size="11">${escapeHtml(String(x))}</text>`);
  for (let i = 0; i <= 3; i++) {
    const v = s.y0 + ((s.y1 - s.y0) * i) / 3;
    out.push(`<text x="${PAD.left - 6}" y="${(s.sy(v) + 4).toFixed(1)}" text-anchor="end" font-size="11">${formatNumber(v, 0)}</text>`);
  }
  out.push(`<text x="${(W + PAD.left) / 2}" y="${H - 8}" text-anchor="middle" font-size="12">${escapeHtml(chart.key)}</text>`);
  out.push(`<text x="${PAD.left}" y="16" font-size="12">${escapeHtml(chart.yLabel)}</text>`);
  return out.join('');
}

// One self-contained SVG chart (no external references).
export function renderChartSvg(chart: ChartModel): string {
  const xs = axisOf(chart);
  const s = scales(chart, xs);
  const line = xs.map((x) => [x, medianAt(chart.points, x)] as const).filter(([, y]) => y !== null)
    .map(([x, y]) => `${s.sx(x).toFixed(1)},${s.sy(y as number).toFixed(1)}`).join(' ');
  const pts = chart.points.map((p) => marker(p, s.sx(p.x), p.y === null ? s.failY : s.sy(p.y))).join('');
  return `<svg viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${escapeHtml(`${chart.yLabel} against ${chart.key}`)}">`
    + `${axes(chart, xs, s)}${line ? `<polyline fill="none" stroke="${COLOURS.ok}" stroke-opacity="0.5" points="${line}"/>` : ''}${pts}</svg>`;
}

// The same chart as text bars for Markdown (one line per value; failures named).
export function renderChartText(chart: ChartModel): string {
  const xs = axisOf(chart);
  const meds = xs.map((x) => medianAt(chart.points, x));
  const top = Math.max(...meds.filter((m): m is number => m !== null), 0) || 1;
  const width = Math.max(...xs.map((x) => String(x).length));
  const lines = xs.map((x, i) => {
    const m = meds[i];
    const bad = chart.points.filter((p) => p.x === x && p.status !== 'ok').map((p) => p.status);
    const note = bad.length ? `  ${[...new Set(bad)].map((b) => (b === 'infeasible' ? 'predicted OOM' : b)).join(', ')}` : '';
    const bar = m === null ? '✕' : `${'█'.repeat(Math.max(1, Math.round((m / top) * BAR_WIDTH)))} ${formatNumber(m)}`;
    return `${String(x).padStart(width)} │${bar}${note}`;
  });
  return [`${chart.key} → ${chart.yLabel}`, ...lines].join('\n');
}
