// Unit parsing for human-written config values ("90%", "2h", "16GiB"); pure, returns null when unreadable.

const DURATION_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, min: 60_000, h: 3_600_000, d: 86_400_000 };
const BYTES: Record<string, number> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

// "90%" → 0.9, 0.9 → 0.9, "0.9" → 0.9 (a ratio is how margins and relative thresholds are used internally).
export function parseRatio(value: number | string): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  const m = /^\s*(-?\d+(?:\.\d+)?)\s*(%?)\s*$/.exec(value);
  if (!m) return null;
  return m[2] ? Number(m[1]) / 100 : Number(m[1]);
}

// True when a threshold was written as a percentage ("90%"), i.e. relative to a reference.
export function isPercent(value: number | string): boolean {
  return typeof value === 'string' && /%\s*$/.test(value);
}

// "90s", "15m", "2h", "1500ms" → milliseconds; a bare number is taken in `bareUnit`.
export function parseDurationMs(value: number | string, bareUnit: keyof typeof DURATION_MS = 's'): number | null {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value * DURATION_MS[bareUnit] : null;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|min|m|h|d)?\s*$/i.exec(value);
  if (!m) return null;
  return Number(m[1]) * DURATION_MS[(m[2] ?? bareUnit).toLowerCase()];
}

// "16GiB", "96 GB", "512MiB" → bytes; a bare number is bytes.
export function parseBytes(value: number | string): number | null {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : null;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]i?b|b)?\s*$/i.exec(value);
  if (!m) return null;
  return Math.round(Number(m[1]) * BYTES[(m[2] ?? 'b').toLowerCase()]);
}
