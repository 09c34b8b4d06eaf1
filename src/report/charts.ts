// Charts of the objective against each tuned parameter: inline SVG for HTML (y from zero), text bars for Markdown. Pure.
import type { ParamValue } from '../engines/types.js';
import { escapeHtml, formatNumber } from './format.js';
import { COLOURS, FONT, FRAME, cross, drawAxes, px, winnerText, wrapSvg, zeroScale } from './svg.js';
import type { ChartModel, ChartPoint } from './types.js';

/** Marker colours: measured, violates a constraint, failed to start/run, refused as infeasible. */
const MARKERS = {
  ok: COLOURS.ok,
  violates: COLOURS.violates,
  failed: COLOURS.failed,
  infeasible: COLOURS.infeasible,
} as const;
// Width of a Markdown text bar at the largest value.
const BAR_WIDTH = 30;

// Distinct x values in axis order (numbers sorted; other values in order of appearance).
export function axisOf(chart: ChartModel): ParamValue[] {
  const xs = [...new Set(chart.points.map((p) => p.x))];
  return chart.numeric ? (xs as number[]).sort((a, b) => a - b) : xs;
}

// Median of the measured values at one x, or null.
function medianAt(points: ChartPoint[], x: ParamValue): number | null {
  const ys = points
    .filter((p) => p.x === x && p.y !== null && p.status !== 'failed')
    .map((p) => p.y as number)
    .sort((a, b) => a - b);
  if (!ys.length) return null;
  const m = Math.floor(ys.length / 2);
  return ys.length % 2 ? ys[m] : (ys[m - 1] + ys[m]) / 2;
}

// The pixel x of a parameter value: proportional for numbers, evenly spaced otherwise.
function xScale(chart: ChartModel, xs: ParamValue[]): (x: ParamValue) => number {
  const plotW = FRAME.width - FRAME.left - FRAME.right;
  const inset = 24;
  if (!chart.numeric)
    return (x) => FRAME.left + inset + (xs.indexOf(x) / Math.max(1, xs.length - 1)) * (plotW - 2 * inset);
  const nums = xs as number[];
  const lo = Math.min(...nums);
  const span = Math.max(...nums) - lo || 1;
  return (x) => FRAME.left + inset + (((x as number) - lo) / span) * (plotW - 2 * inset);
}

// The marker of one point (failures on the axis: they have no value).
function marker(p: ChartPoint, x: number, y: number, isBest: boolean): string {
  const tip = `<title>trial ${p.seq}: ${escapeHtml(String(p.x))} → ${p.y === null ? p.status : formatNumber(p.y)}${p.status === 'violates' ? ' (violates a constraint)' : ''}${isBest ? ' (winner)' : ''}</title>`;
  if (p.status === 'failed' || p.status === 'infeasible')
    return `<g class="pt ${p.status}">${cross(x, y, MARKERS[p.status], p.status === 'infeasible', 5)}${tip}</g>`;
  const ring = isBest
    ? `<circle cx="${px(x)}" cy="${px(y)}" r="9" fill="none" stroke="${COLOURS.best}" stroke-width="2.5"/>`
    : '';
  return `<g class="pt ${p.status}${isBest ? ' best' : ''}">${ring}<circle cx="${px(x)}" cy="${px(y)}" r="4.5" fill="${isBest ? COLOURS.best : MARKERS[p.status]}"/>${tip}</g>`;
}

// One self-contained SVG chart of the objective against a parameter (y from zero, winner ringed and labelled).
export function renderChartSvg(chart: ChartModel): string {
  const xs = axisOf(chart);
  const s = zeroScale(chart.points.map((p) => p.y ?? 0));
  const sx = xScale(chart, xs);
  const ticks = xs
    .map(
      (x) =>
        `<text class="xtick" x="${px(sx(x))}" y="${FRAME.height - FRAME.bottom + 18}" text-anchor="middle" font-size="${FONT.tick}">${escapeHtml(String(x))}</text>`,
    )
    .join('');
  const line = xs
    .map((x) => [x, medianAt(chart.points, x)] as const)
    .filter(([, y]) => y !== null)
    .map(([x, y]) => `${px(sx(x))},${px(s.y(y as number))}`)
    .join(' ');
  const pts = chart.points
    .map((p) => marker(p, sx(p.x), p.y === null ? s.y(0) - 8 : s.y(p.y), p.seq === chart.bestSeq))
    .join('');
  const best = chart.points.find((p) => p.seq === chart.bestSeq && p.y !== null);
  const label = best ? winnerText(sx(best.x), s.y(best.y as number) - 4, `★ winner (trial ${best.seq})`) : '';
  const body =
    drawAxes(s, chart.key, chart.yLabel) +
    ticks +
    (line
      ? `<polyline fill="none" stroke="${COLOURS.ok}" stroke-opacity="0.5" stroke-width="1.5" points="${line}"/>`
      : '') +
    pts +
    label;
  return wrapSvg(body, `${chart.yLabel} against ${chart.key}`, 'param');
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
    const note = bad.length
      ? `  ${[...new Set(bad)].map((b) => (b === 'infeasible' ? 'predicted OOM' : b)).join(', ')}`
      : '';
    const bar = m === null ? '✕' : `${'█'.repeat(Math.max(1, Math.round((m / top) * BAR_WIDTH)))} ${formatNumber(m)}`;
    return `${String(x).padStart(width)} │${bar}${note}`;
  });
  return [`${chart.key} → ${chart.yLabel}`, ...lines].join('\n');
}
