// Small formatting helpers shared by the Markdown and HTML renderers.
import type { ParamValue } from '../engines/types.js';
import { redactText } from '../redact.js';

// A number for a table: integers as such, others with one decimal; "–" when missing.
export function formatNumber(v: number | null | undefined, digits = 1): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  return Number.isInteger(v) ? String(v) : v.toFixed(digits);
}

// A relative change as "+25.3%".
export function formatPercent(v: number | null): string {
  if (v === null || !Number.isFinite(v)) return '–';
  return `${v >= 0 ? '+' : ''}${(v * 100).toFixed(1)}%`;
}

// A config as "speculative_num_steps=4, cuda_graph_max_bs=256" over the tuned keys.
export function formatConfig(params: Record<string, ParamValue>, keys: readonly string[]): string {
  const shown = keys.length ? keys.filter((k) => k in params) : Object.keys(params);
  return shown.map((k) => `${k}=${String(params[k])}`).join(', ') || '(defaults)';
}

// Escape text for HTML (and scrub secrets once more: reports get shared).
export function escapeHtml(s: string): string {
  return redactText(s)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

// Escape text for a Markdown table cell.
export function escapeCell(s: string): string {
  return redactText(s).replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

// "2026-03-09T22:28:48.000Z" → "2026-03-09 22:28:48".
export function formatTime(iso: string): string {
  return iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, '');
}
