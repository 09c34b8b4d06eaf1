// Timestamps as journald and the engines print them; pure (the year of yearless stamps is passed in, never read).

const MONTHS: Record<string, number> = {
  Jan: 0,
  Feb: 1,
  Mar: 2,
  Apr: 3,
  May: 4,
  Jun: 5,
  Jul: 6,
  Aug: 7,
  Sep: 8,
  Oct: 9,
  Nov: 10,
  Dec: 11,
};
const SHORT = /^([A-Z][a-z]{2}) ([ \d]\d) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?$/;
const ISO_LIKE = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?$/;
/** Journald's __REALTIME_TIMESTAMP: microseconds since the epoch, kept raw until a line is quoted. */
const MICROS = /^\d{13,17}$/;
const MONTH_DAY = /^(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

/** A point in time as far as the input tells it: epoch ms (wall clock taken as UTC when no zone is given). */
export interface Stamp {
  ms: number;
  /** True when the year was not in the text and came from a hint. */
  guessedYear: boolean;
  /** True when the text carried a zone (or was epoch-based), so the instant is exact. */
  zoned: boolean;
}

// Milliseconds of a fraction string ("123456" -> 123).
function fractionMs(f: string | undefined): number {
  return f ? Math.floor(Number(`0.${f}`) * 1000) : 0;
}

// Parse journald short / short-precise ("Mar 09 22:28:48[.123456]"); needs a year.
function parseShort(m: RegExpExecArray, year: number): number {
  return Date.UTC(year, MONTHS[m[1]] ?? 0, Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]), fractionMs(m[6]));
}

// Parse any timestamp text diagnose meets; yearHint fills in journald short and vLLM "MM-DD HH:MM:SS" stamps.
export function parseStamp(text: string | null, yearHint: number | null): Stamp | null {
  if (!text) return null;
  if (MICROS.test(text)) return { ms: Number(text.slice(0, -3)), guessedYear: false, zoned: true };
  let m = ISO_LIKE.exec(text);
  if (m) {
    const zone = m[8];
    const base = Date.UTC(
      Number(m[1]),
      Number(m[2]) - 1,
      Number(m[3]),
      Number(m[4]),
      Number(m[5]),
      Number(m[6]),
      fractionMs(m[7]),
    );
    if (!zone || zone === 'Z') return { ms: base, guessedYear: false, zoned: zone === 'Z' };
    const sign = zone[0] === '-' ? -1 : 1;
    const [hh, mm] = [Number(zone.slice(1, 3)), Number(zone.slice(-2))];
    return { ms: base - sign * (hh * 60 + mm) * 60_000, guessedYear: false, zoned: true };
  }
  if (yearHint === null) return null;
  m = SHORT.exec(text);
  if (m) return { ms: parseShort(m, yearHint), guessedYear: true, zoned: false };
  m = MONTH_DAY.exec(text);
  if (m) {
    const ms = Date.UTC(yearHint, Number(m[1]) - 1, Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]));
    return { ms, guessedYear: true, zoned: false };
  }
  return null;
}

// The 4-digit year a timestamp text carries, if any (used as the hint for yearless stamps).
export function yearOf(text: string | null): number | null {
  if (!text) return null;
  if (MICROS.test(text)) return new Date(Number(text.slice(0, -3))).getUTCFullYear();
  const m = /^(\d{4})-\d{2}-\d{2}/.exec(text);
  return m ? Number(m[1]) : null;
}

// Render a stamp for the report: exact instants as ISO with Z, wall-clock times without a zone.
export function formatStamp(s: Stamp | null): string | null {
  if (!s) return null;
  const iso = new Date(s.ms).toISOString();
  return s.zoned ? iso.replace('.000Z', 'Z') : iso.slice(0, iso.includes('.000Z') ? 19 : 23);
}
