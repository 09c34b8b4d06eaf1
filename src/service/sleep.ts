// The controller's pause between polls, which an abort ends early.

// Sleep that an abort ends early; the abort listener is removed when the timer fires, so that one signal can
// carry thousands of polls (a 20-minute start at 250 ms) without piling up listeners.
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) {
      resolve();
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
