// Non-TTY renderer (CI, pipes): one plain line per event, nothing rewritten.
import type { SpectuneEvent } from '../../tune/events.js';
import { redactText } from '../../redact.js';
import { formatEvent } from './format.js';
import { createProgress, describeProgress, updateProgress } from './progress.js';
import type { Renderer, RenderTarget } from './types.js';

/** Elapsed-time prefix width keeps the columns aligned in logs. */
const ELAPSED_WIDTH = 7;
/** A log gets a progress line at most this often (and at each new benchmark level): enough to see it move. */
const PROGRESS_EVERY_MS = 10_000;

// Create a renderer that writes "[ +12.3s] trial 2: bench" lines; elapsed time is relative to the first event.
export function createPlainRenderer(out: RenderTarget): Renderer {
  let t0: number | null = null;
  let progress = createProgress();
  let lastProgress: { ts: number; concurrency: number } | null = null;
  const line = (ts: number, text: string) => {
    t0 ??= ts;
    const elapsed = `+${((ts - t0) / 1000).toFixed(1)}s`.padStart(ELAPSED_WIDTH);
    out.write(`[${elapsed}] ${redactText(text)}\n`);
  };
  return {
    onEvent(e: SpectuneEvent) {
      progress = updateProgress(progress, e);
      if (e.type !== 'bench:progress') return line(e.ts, formatEvent(e));
      // Piped: no line rewritten, so progress only every PROGRESS_EVERY_MS or when the level changes.
      if (lastProgress && lastProgress.concurrency === e.concurrency && e.ts - lastProgress.ts < PROGRESS_EVERY_MS)
        return;
      lastProgress = { ts: e.ts, concurrency: e.concurrency };
      line(e.ts, `bench ${describeProgress(progress, e.ts)}`);
    },
    close() {},
  };
}
