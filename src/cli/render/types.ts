// Shared shapes of the event renderers.
import type { SpectuneEvent } from '../../tune/events.js';

/** Where a renderer writes (stderr in the CLI, a fake stream in tests). */
export interface RenderTarget {
  write(chunk: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/** A consumer of the event stream that draws it for a human or a machine. */
export interface Renderer {
  onEvent(e: SpectuneEvent): void;
  /** Flush and release the live line, if any. */
  close(): void;
}

/** Which renderer to use. */
export type RenderMode = 'tty' | 'plain' | 'json';
