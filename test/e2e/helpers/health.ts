// One readiness poll for every e2e test that starts an engine itself.

/** Wait until GET <endpoint>/health answers 200 (engines answer 503 or refuse while loading). */
export async function waitHealthy(endpoint: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`${endpoint}/health`, { signal: AbortSignal.timeout(2000) })).status === 200) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${endpoint} did not become healthy in ${timeoutMs} ms`);
}
