// TTY renderer: permanent lines for what matters, plus one rate-limited live line that is rewritten in place.
import type { SpectuneEvent } from '../../tune/events.js';
import { redactText } from '../../redact.js';
import { formatEvent } from './format.js';
import { createLiveStatus, renderLiveStatus, updateLiveStatus, type LiveStatus } from './status.js';
import type { Renderer, RenderTarget } from './types.js';

/** At most ten redraws a second: smooth to the eye, cheap over slow SSH terminals. */
const REDRAW_INTERVAL_MS = 100;
/** Refresh the elapsed clock once a second even when no event arrives (model loads take ~100 s). */
const TICK_MS = 1000;
/** Narrowest live line worth drawing. */
const MIN_COLUMNS = 20;
/** Used when the terminal does not say how wide it is (or says 0, as under `script`). */
const DEFAULT_COLUMNS = 100;
/** Carriage return + erase line: rewrite the live line in place. */
const CLEAR_LINE = '\r\x1b[2K';

/** Events that only move the live line and never get a permanent line of their own. */
const LIVE_ONLY = new Set<SpectuneEvent['type']>(['bench:progress', 'trial:phase', 'service:state', 'service:drain']);

/** Options for tests: an injected clock and no background ticker. */
export interface TtyOptions {
  now?: () => number;
  tick?: boolean;
}

// Create the live renderer for an interactive terminal.
export function createTtyRenderer(out: RenderTarget, opts: TtyOptions = {}): Renderer {
  const now = opts.now ?? Date.now;
  let status: LiveStatus = createLiveStatus();
  let lastDraw = 0;
  let liveShown = false;
  const width = () => Math.max(MIN_COLUMNS, (out.columns || DEFAULT_COLUMNS) - 1);
  const draw = (force: boolean) => {
    const t = now();
    if (!force && t - lastDraw < REDRAW_INTERVAL_MS) return;
    lastDraw = t;
    const line = renderLiveStatus(status, t);
    out.write(CLEAR_LINE + (line ? redactText(line).slice(0, width()) : ''));
    liveShown = line !== null;
  };
  const ticker = opts.tick === false ? null : setInterval(() => draw(true), TICK_MS);
  ticker?.unref();
  return {
    onEvent(e: SpectuneEvent) {
      status = updateLiveStatus(status, e);
      if (LIVE_ONLY.has(e.type)) return draw(false);
      out.write(`${liveShown ? CLEAR_LINE : ''}${redactText(formatEvent(e))}\n`);
      liveShown = false;
      draw(true);
    },
    close() {
      if (ticker) clearInterval(ticker);
      if (liveShown) out.write(CLEAR_LINE);
      liveShown = false;
    },
  };
}
