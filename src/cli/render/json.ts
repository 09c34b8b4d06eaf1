// --json renderer: every event as one NDJSON line (on stderr; the final result goes to stdout).
import type { SpectuneEvent } from '../../tune/events.js';
import { redactText } from '../../redact.js';
import type { Renderer, RenderTarget } from './types.js';

// Redact every string inside a JSON-able value (redacting the serialised text could eat a closing quote).
export function redactDeep(value: unknown): unknown {
  if (typeof value === 'string') return redactText(value);
  if (Array.isArray(value)) return value.map(redactDeep);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactDeep(v)]));
  return value;
}

// Create a renderer that writes each event as one JSON line, secrets redacted.
export function createJsonRenderer(out: RenderTarget): Renderer {
  return {
    onEvent(e: SpectuneEvent) {
      out.write(`${JSON.stringify(redactDeep(e))}\n`);
    },
    close() {},
  };
}
