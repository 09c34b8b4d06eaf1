// The per-trial charts as inline SVG: the objective of each trial (winner starred, failures crossed out with their
// verdict) and a metric against concurrency with a line per trial (winner bold and labelled). Pure.
import { escapeHtml, formatNumber } from './format.js';
import { COLOURS, FONT, FRAME, cross, drawAxes, px, winnerText, wrapSvg, zeroScale } from './svg.js';
import type { BarChartModel, LineChartModel, Series, TrialBar } from './types.js';

/** Line colours of the trials that are neither winner nor baseline (none green or blue: those mark winner and baseline). */
const PALETTE = [
  '#7c3aed',
  '#db2777',
  '#0891b2',
  '#ca8a04',
  '#9f1239',
  '#0d9488',
  '#c2410c',
  '#4b5563',
  '#a21caf',
  '#854d0e',
];
/** Up to this many bars the baseline's tick says "(base)"; beyond, the labels would overlap. */
const ROOM_FOR_BASE_LABEL = 14;
/** Widest bar (px), so that a short campaign does not draw slabs. */
const MAX_BAR = 44;

// Colour of a trial's line.
export function seriesColour(s: Series, i: number): string {
  return s.role === 'best' ? COLOURS.best : s.role === 'baseline' ? COLOURS.baseline : PALETTE[i % PALETTE.length];
}

// Colour of a bar.
function barColour(b: TrialBar): string {
  return b.isBest ? COLOURS.best : COLOURS[b.status];
}

// One bar, or an ✕ with the verdict written upwards from the axis.
function drawBar(b: TrialBar, cx: number, width: number, s: ReturnType<typeof zeroScale>): string {
  const base = s.y(0);
  const tip = `<title>trial ${b.seq}: ${b.y === null ? escapeHtml(b.verdict ?? b.status) : formatNumber(b.y)}${b.status === 'violates' ? ' (violates a constraint)' : ''}</title>`;
  if (b.y === null) {
    const label = b.verdict ?? b.status;
    return (
      `<g class="bar ${b.status}" data-seq="${b.seq}">${cross(cx, base - 8, COLOURS[b.status], b.status === 'infeasible')}` +
      `<text transform="translate(${px(cx + 4)} ${px(base - 20)}) rotate(-90)" font-size="${FONT.note}" fill="${COLOURS[b.status]}">${escapeHtml(label)}</text>${tip}</g>`
    );
  }
  const top = s.y(b.y);
  const rect = `<rect x="${px(cx - width / 2)}" y="${px(top)}" width="${px(width)}" height="${px(base - top)}" fill="${barColour(b)}"${b.status === 'violates' ? ' fill-opacity="0.55"' : ''}/>`;
  const value = `<text x="${px(cx)}" y="${px(top - 5)}" text-anchor="middle" font-size="${FONT.note}">${formatNumber(b.y)}</text>`;
  const star = b.isBest
    ? `<text class="winner" x="${px(cx)}" y="${px(top - 20)}" text-anchor="middle" font-size="${FONT.label}" font-weight="700" fill="${COLOURS.best}">★ winner</text>`
    : '';
  return `<g class="bar ${b.status}${b.isBest ? ' best' : ''}" data-seq="${b.seq}">${rect}${value}${star}${tip}</g>`;
}

// The objective of every trial in campaign order.
export function renderTrialChartSvg(c: BarChartModel): string {
  const s = zeroScale(c.bars.map((b) => b.y ?? 0));
  const plotW = FRAME.width - FRAME.left - FRAME.right;
  const slot = plotW / Math.max(1, c.bars.length);
  const width = Math.min(MAX_BAR, slot * 0.6);
  const bars = c.bars
    .map((b, i) => {
      const cx = FRAME.left + slot * (i + 0.5);
      const base = b.isBaseline && c.bars.length <= ROOM_FOR_BASE_LABEL ? ' (base)' : '';
      const tick = `<text class="xtick" x="${px(cx)}" y="${FRAME.height - FRAME.bottom + 18}" text-anchor="middle" font-size="${FONT.tick}">${b.seq}${base}</text>`;
      return drawBar(b, cx, width, s) + tick;
    })
    .join('');
  return wrapSvg(drawAxes(s, 'trial number (campaign order)', c.yLabel) + bars, c.title, 'trials');
}

// The pixel x of each concurrency level (evenly spaced: levels are usually powers of two).
function levelX(xs: number[]): (x: number) => number {
  const plotW = FRAME.width - FRAME.left - FRAME.right;
  const slot = plotW / Math.max(1, xs.length);
  return (x) => FRAME.left + slot * (xs.indexOf(x) + 0.5);
}

// One trial's line with its points.
function drawSeries(ser: Series, colour: string, sx: (x: number) => number, s: ReturnType<typeof zeroScale>): string {
  const best = ser.role === 'best';
  const width = best ? 3.5 : ser.role === 'baseline' ? 2.5 : 1.5;
  const dash = ser.violates ? ' stroke-dasharray="2 4"' : ser.role === 'baseline' ? ' stroke-dasharray="8 4"' : '';
  const pts = ser.points.map((p) => `${px(sx(p.x))},${px(s.y(p.y))}`).join(' ');
  const line =
    ser.points.length > 1
      ? `<polyline fill="none" stroke="${colour}" stroke-width="${width}"${dash} stroke-opacity="${best ? 1 : 0.85}" points="${pts}"/>`
      : '';
  const dots = ser.points
    .map(
      (p) =>
        `<circle cx="${px(sx(p.x))}" cy="${px(s.y(p.y))}" r="${best ? 5 : 3.5}" fill="${colour}"><title>${escapeHtml(ser.label)} at c=${p.x}: ${formatNumber(p.y)}</title></circle>`,
    )
    .join('');
  return `<g class="series ${ser.role}" data-seq="${ser.seq}">${line}${dots}</g>`;
}

// The winner's label above its last point.
function winnerLabel(ser: Series, sx: (x: number) => number, s: ReturnType<typeof zeroScale>): string {
  const last = ser.points[ser.points.length - 1];
  return winnerText(sx(last.x), s.y(last.y), `★ winner (trial ${ser.seq})`);
}

// A metric against concurrency, one line per trial; the winner drawn last (on top) and labelled.
export function renderLevelChartSvg(c: LineChartModel): string {
  const s = zeroScale(c.series.flatMap((x) => x.points.map((p) => p.y)));
  const sx = levelX(c.xs);
  const ticks = c.xs
    .map(
      (x) =>
        `<text class="xtick" x="${px(sx(x))}" y="${FRAME.height - FRAME.bottom + 18}" text-anchor="middle" font-size="${FONT.tick}">${x}</text>`,
    )
    .join('');
  const order = c.series
    .map((ser, i) => ({ ser, colour: seriesColour(ser, i) }))
    .sort((a, b) => Number(a.ser.role === 'best') - Number(b.ser.role === 'best'));
  const lines = order.map(({ ser, colour }) => drawSeries(ser, colour, sx, s)).join('');
  const best = c.series.find((x) => x.role === 'best');
  const label = best ? winnerLabel(best, sx, s) : '';
  return wrapSvg(
    drawAxes(s, 'concurrency (requests in flight)', c.yLabel) + ticks + lines + label,
    `${c.title}: ${c.yLabel} against concurrency`,
    `levels ${c.id}`,
  );
}
