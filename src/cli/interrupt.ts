// How `spectune tune` ends on a signal: SIGINT, SIGTERM and SIGHUP (a closed SSH terminal) all abort the run through
// its AbortSignal, so the candidate in flight is rolled back, the lock released and the campaign marked interrupted.
// A second Ctrl-C says what is going on; a third leaves the host to its lease (the host restores known-good itself).

/** What a signal listener needs of `process` (a real EventEmitter in tests). */
export interface SignalSource {
  on(event: NodeJS.Signals, fn: () => void): unknown;
  removeListener(event: NodeJS.Signals, fn: () => void): unknown;
}

/** Exit status of a run ended by each signal (the shell's 128 + signal number). */
export const SIGNAL_EXIT: Record<'SIGINT' | 'SIGTERM' | 'SIGHUP', number> = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 };

/** The signals a run handles, and how it tells the operator. */
export interface InterruptHandle {
  /** The first signal received (null: none). */
  readonly received: keyof typeof SIGNAL_EXIT | null;
  dispose(): void;
}

// Listen for SIGINT, SIGTERM and SIGHUP: the first aborts `ac`; a second SIGINT warns once; a third exits at once.
export function handleInterrupts(
  ac: AbortController,
  o: { proc: SignalSource; say: (line: string) => void; exit: (code: number) => void; leaseNote?: string },
): InterruptHandle {
  let received: keyof typeof SIGNAL_EXIT | null = null;
  let extraInts = 0;
  const on = (sig: keyof typeof SIGNAL_EXIT) => () => {
    if (received === null) {
      received = sig;
      o.say(
        `spectune: ${sig} received: rolling back to known-good, releasing the lock, marking the campaign interrupted (resume with --resume)`,
      );
      ac.abort(new Error(`interrupted by ${sig}`));
      return;
    }
    if (sig !== 'SIGINT') return;
    extraInts++;
    if (extraInts === 1)
      o.say(
        `spectune: rolling back, press Ctrl-C again to leave the host to its lease${o.leaseNote ? ` (${o.leaseNote})` : ''}`,
      );
    else o.exit(SIGNAL_EXIT.SIGINT);
  };
  const fns = { SIGINT: on('SIGINT'), SIGTERM: on('SIGTERM'), SIGHUP: on('SIGHUP') };
  for (const [s, fn] of Object.entries(fns)) o.proc.on(s as NodeJS.Signals, fn);
  return {
    get received() {
      return received;
    },
    dispose() {
      for (const [s, fn] of Object.entries(fns)) o.proc.removeListener(s as NodeJS.Signals, fn);
    },
  };
}

// A closed terminal (SIGHUP) turns every later write into EPIPE/EIO: swallow those so the rollback still finishes.
export function ignoreBrokenOutput(...streams: NodeJS.WritableStream[]): void {
  for (const s of streams)
    s.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code !== 'EPIPE' && e.code !== 'EIO') throw e;
    });
}
