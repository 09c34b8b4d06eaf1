// Progress of a service command (apply, rollback, fold) on stderr: one line per event; the drain before a stop is
// one line that a terminal rewrites in place every second (a countdown), and a pipe gets only its state changes.
import { redactText } from '../redact.js';
import { formatServiceEvent } from '../service/render.js';
import type { CliIo } from './io.js';

/** Carriage return + erase line. */
const CLEAR_LINE = '\r\x1b[2K';
const TICK_MS = 1000;

/** A sink of service events and a close() that ends the live line. */
export interface ServiceProgress {
  onEvent(e: Parameters<typeof formatServiceEvent>[0]): void;
  close(): void;
}

// The progress printer of a service command.
export function createServiceProgress(io: CliIo): ServiceProgress {
  const tty = io.stderr.isTTY === true && io.env.TERM !== 'dumb' && io.env.CI === undefined;
  let live: Parameters<typeof formatServiceEvent>[0] | null = null;
  let ticker: NodeJS.Timeout | null = null;
  const stop = () => {
    if (ticker) clearInterval(ticker);
    ticker = null;
    if (live) io.stderr.write(CLEAR_LINE);
    live = null;
  };
  const drawLive = () => {
    if (!live) return;
    const l = formatServiceEvent(live, Date.now());
    if (l) io.stderr.write(`${CLEAR_LINE}${redactText(l)}`);
  };
  return {
    onEvent(e) {
      if (tty && e.type === 'service:drain') {
        live = e;
        drawLive();
        ticker ??= setInterval(drawLive, TICK_MS);
        ticker.unref();
        return;
      }
      stop();
      const l = formatServiceEvent(e);
      if (l) io.stderr.write(`${redactText(l)}\n`);
    },
    close: stop,
  };
}
