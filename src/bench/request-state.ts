// Settling logic shared by the transports: one outcome per request, whatever fires first (end of stream,
// watchdog timeout, closed connection). No transport is imported here, so every transport can import it.
import type { RequestOutcome, RequestTimeline } from './metrics.js';
import type { SseScanner } from './sse.js';
import type { BenchErrors } from './types.js';

/** Where a request is: connecting, waiting for its first token, or streaming. */
export type StreamPhase = 'connect' | 'first' | 'stream';

/** A request on the wire; the watchdog reads `phase`/`lastActivityMs` and calls `fail` on timeouts. */
export interface InFlight {
  readonly id: string;
  readonly timeline: RequestTimeline;
  readonly scanner: SseScanner;
  phase: StreamPhase;
  lastActivityMs: number;
  fail(phase: keyof BenchErrors, message: string): void;
  readonly done: Promise<RequestOutcome>;
}

/** Settling logic shared by the transports: one outcome per request, whatever fires first. */
export interface RequestState {
  readonly inflight: InFlight;
  readonly settled: boolean;
  finish(ok: boolean, phase: keyof BenchErrors | null, error: string | null): void;
  // The response ended: ok after [DONE], else the phase that explains why not.
  finishStream(): void;
}

// Create the state of one request; `abort` tears the connection down when the watchdog fails it.
export function createRequestState(
  id: string,
  timeline: RequestTimeline,
  scanner: SseScanner,
  now: () => number,
  abort: () => void,
): RequestState {
  let settle!: (o: RequestOutcome) => void;
  const done = new Promise<RequestOutcome>((r) => {
    settle = r;
  });
  let settled = false;
  const finish = (ok: boolean, phase: keyof BenchErrors | null, error: string | null): void => {
    if (settled) return;
    settled = true;
    settle({
      id,
      ok,
      errorPhase: phase,
      error,
      endMs: now(),
      completionTokens: scanner.completionTokens,
      promptTokens: scanner.promptTokens,
      draft: streamDraft(scanner),
    });
  };
  const inflight: InFlight = {
    id,
    timeline,
    scanner,
    phase: 'connect',
    lastActivityMs: timeline.startMs,
    done,
    fail(phase, message) {
      finish(false, phase, message);
      abort();
    },
  };
  return {
    inflight,
    get settled() {
      return settled;
    },
    finish,
    finishStream() {
      if (scanner.errorMessage !== null) finish(false, 'other', `stream error: ${scanner.errorMessage}`);
      else if (!scanner.done)
        finish(false, 'endedEarly', `stream ended before [DONE] after ${timeline.frames} token frames`);
      else finish(true, null, null);
    },
  };
}

// llama-server's draft counts of one request, when its final chunk carried them.
function streamDraft(s: SseScanner): RequestOutcome['draft'] {
  return s.draftTokens >= 0 && s.draftAccepted >= 0
    ? { drafted: s.draftTokens, accepted: s.draftAccepted, predicted: s.predictedTokens }
    : undefined;
}
