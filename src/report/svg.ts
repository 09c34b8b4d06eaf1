// Shared pieces of the report's inline SVG charts: the frame, a y axis that starts at zero with round ticks, labels. Pure.
import { escapeHtml } from './format.js';

/** Chart geometry (px in the viewBox; the SVG scales to its container, two charts side by side on a laptop screen). */
export const FRAME = { width: 600, height: 300, left: 64, right: 20, top: 28, bottom: 52 } as const;
/** Font sizes (px in the viewBox). */
export const FONT = { tick: 13, label: 14, note: 12 } as const;
/** Colours of trial states (shared with the HTML legend). */
export const COLOURS = {
  ok: '#2563eb',
  violates: '#d97706',
  failed: '#dc2626',
  infeasible: '#6b7280',
  best: '#16a34a',
  baseline: '#2563eb',
  axis: '#6b7280',
  grid: '#e5e7eb',
} as const;
/** The fraction of the axis left above the largest value. */
const HEADROOM = 1.08;
/** At most this many intervals between y ticks (the smallest round step that stays within it wins). */
const MAX_INTERVALS = 7;
/** Round tick steps, times a power of ten. */
const STEPS = [1, 2, 2.5, 5, 10];

/** A y scale from zero: top value, tick step, and the pixel of a value. */
export interface YScale {
  max: number;
  step: number;
  y: (v: number) => number;
}

// The smallest round step (1, 2, 2.5 or 5 times a power of ten) that covers `top` in at most MAX_INTERVALS ticks.
export function niceStep(top: number): number {
  const mag = 10 ** Math.floor(Math.log10(top / MAX_INTERVALS));
  for (const f of [...STEPS, ...STEPS.map((x) => x * 10)])
    if (Math.ceil(top / (f * mag) - 1e-9) <= MAX_INTERVALS) return f * mag;
  return 100 * mag;
}

// A y scale from 0 to a round value above the largest value (1 when there is nothing to show).
export function zeroScale(values: number[]): YScale {
  const hi = Math.max(0, ...values.filter((v) => Number.isFinite(v)));
  const top = hi > 0 ? hi * HEADROOM : 1;
  const step = niceStep(top);
  const max = Number((Math.ceil(top / step - 1e-9) * step).toPrecision(12));
  const bottom = FRAME.height - FRAME.bottom;
  return { max, step, y: (v) => bottom - (v / max) * (bottom - FRAME.top) };
}

// A tick value without float noise (0.30000000000000004 → 0.3; 12000 → 12000).
export function formatTick(v: number): string {
  return String(Number(v.toPrecision(6)));
}

// Pixel with one decimal.
export const px = (v: number) => (Math.round(v * 10) / 10).toString();

// Grid lines and labels of the y axis (0 is always a tick), the axis lines, and both axis titles.
export function drawAxes(s: YScale, xTitle: string, yTitle: string): string {
  const { width: W, height: H, left: L, right: R, top: T, bottom: B } = FRAME;
  const out: string[] = [];
  for (let i = 0; i * s.step <= s.max + s.step / 2; i++) {
    const v = i * s.step;
    const y = px(s.y(v));
    out.push(`<line class="grid" x1="${L}" y1="${y}" x2="${W - R}" y2="${y}" stroke="${COLOURS.grid}"/>`);
    out.push(
      `<text class="ytick" x="${L - 8}" y="${px(s.y(v) + 4)}" text-anchor="end" font-size="${FONT.tick}">${formatTick(v)}</text>`,
    );
  }
  out.push(`<line class="axis x" x1="${L}" y1="${H - B}" x2="${W - R}" y2="${H - B}" stroke="${COLOURS.axis}"/>`);
  out.push(`<line class="axis y" x1="${L}" y1="${T}" x2="${L}" y2="${H - B}" stroke="${COLOURS.axis}"/>`);
  out.push(
    `<text class="xtitle" x="${px((W + L - R) / 2)}" y="${H - 10}" text-anchor="middle" font-size="${FONT.label}">${escapeHtml(xTitle)}</text>`,
  );
  out.push(
    `<text class="ytitle" transform="translate(16 ${px((T + H - B) / 2)}) rotate(-90)" text-anchor="middle" font-size="${FONT.label}">${escapeHtml(yTitle)}</text>`,
  );
  return out.join('');
}

// The <svg> element around a chart's body (no external references; scales to the page width).
export function wrapSvg(body: string, label: string, cls: string): string {
  return `<svg class="chart ${cls}" viewBox="0 0 ${FRAME.width} ${FRAME.height}" width="100%" role="img" aria-label="${escapeHtml(label)}" font-family="system-ui,sans-serif" data-y-min="0">${body}</svg>`;
}

// An ✕ marker centred on (x, y).
export function cross(x: number, y: number, colour: string, dashed: boolean, r = 6): string {
  const dash = dashed ? ' stroke-dasharray="2 2"' : '';
  return `<g stroke="${colour}" stroke-width="2.5"${dash}><line x1="${px(x - r)}" y1="${px(y - r)}" x2="${px(x + r)}" y2="${px(y + r)}"/><line x1="${px(x - r)}" y1="${px(y + r)}" x2="${px(x + r)}" y2="${px(y - r)}"/></g>`;
}

/** Half the width (px) of a "★ winner (trial N)" label, to keep it inside the frame. */
const HALF_LABEL = 80;

// The winner's label above a point, anchored so that it stays inside the frame.
export function winnerText(x: number, y: number, text: string): string {
  const anchor = x > FRAME.width - FRAME.right - HALF_LABEL ? 'end' : x < FRAME.left + HALF_LABEL ? 'start' : 'middle';
  const dx = anchor === 'end' ? 6 : anchor === 'start' ? -6 : 0;
  return `<text class="winner" x="${px(x + dx)}" y="${px(Math.max(FRAME.top + 12, y - 16))}" text-anchor="${anchor}" font-size="${FONT.label}" font-weight="700" fill="${COLOURS.best}">${escapeHtml(text)}</text>`;
}
