// Every string that enters the store passes redaction here; JSON columns are parsed back on the way out.
import { redactText, redactValue } from '../redact.js';

// Serialise a value for a JSON column, secrets removed.
export function toJson(value: unknown): string {
  return JSON.stringify(redactValue(value));
}

// Same, keeping null as SQL NULL.
export function toJsonOrNull(value: unknown): string | null {
  return value === undefined || value === null ? null : toJson(value);
}

// Redact free text for a TEXT column.
export function toText(value: string | null | undefined): string | null {
  return value === undefined || value === null ? null : redactText(value);
}

// Parse a JSON column (null stays null).
export function fromJson<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}

// The current time as ISO-8601, unless the caller passed one (tests, replays).
export function isoNow(ts?: string): string {
  return ts ?? new Date().toISOString();
}
