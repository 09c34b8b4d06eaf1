// Non-TTY renderer (CI, pipes): one plain line per event, nothing rewritten.
import type { SpectuneEvent } from '../../tune/events.js';
import { redactText } from '../../redact.js';
import { formatEvent } from './format.js';
import type { Renderer, RenderTarget } from './types.js';

/** Elapsed-time prefix width keeps the columns aligned in logs. */
const ELAPSED_WIDTH = 7;

// Create a renderer that writes "[ +12.3s] trial 2: bench" lines; elapsed time is relative to the first event.
export function createPlainRenderer(out: RenderTarget): Renderer {
  let t0: number | null = null;
  return {
    onEvent(e: SpectuneEvent) {
      if (e.type === 'bench:progress') return;
      t0 ??= e.ts;
      const elapsed = `+${((e.ts - t0) / 1000).toFixed(1)}s`.padStart(ELAPSED_WIDTH);
      out.write(`[${elapsed}] ${redactText(formatEvent(e))}\n`);
    },
    close() {},
  };
}
