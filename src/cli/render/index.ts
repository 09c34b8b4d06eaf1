// Event renderers shared by every command that streams progress: TTY live line, plain lines, NDJSON.
import { createJsonRenderer } from './json.js';
import { createPlainRenderer } from './plain.js';
import { createTtyRenderer } from './tty.js';
import type { RenderMode, Renderer, RenderTarget } from './types.js';

export type { RenderMode, Renderer, RenderTarget } from './types.js';
export { formatConfig, formatDuration, formatEvent, verdictLabel } from './format.js';
export { createJsonRenderer, createPlainRenderer, createTtyRenderer };

// Pick the renderer a command should use: --json wins, then a terminal gets the live view.
export function chooseRenderMode(opts: {
  json: boolean;
  isTTY: boolean | undefined;
  env?: NodeJS.ProcessEnv;
}): RenderMode {
  if (opts.json) return 'json';
  if (opts.isTTY && opts.env?.CI === undefined && opts.env?.TERM !== 'dumb') return 'tty';
  return 'plain';
}

// Create the renderer for a mode, writing to `out` (normally stderr).
export function createRenderer(mode: RenderMode, out: RenderTarget): Renderer {
  if (mode === 'json') return createJsonRenderer(out);
  if (mode === 'tty') return createTtyRenderer(out);
  return createPlainRenderer(out);
}
