// SGLang's KV-pool bookkeeping for admission and retraction: the decaying new-token ratio (pure).

/** schedule_policy defaults: init 0.7 (×schedule_conservativeness 1), min = init × 0.14, decayed over 600 steps. */
export const NEW_TOKEN_RATIO = { init: 0.7, min: 0.7 * 0.14, decaySteps: 600 } as const;
/** SGLang reserves this many future decode steps per request when it recomputes the ratio after a retraction. */
const RETRACT_DECODE_STEPS = 20;

/** What the budget needs to know about one request. */
export interface KvReq {
  promptTokens: number;
  generated: number;
  targetTokens: number;
}

// One decode step's decay of the ratio toward its floor.
export function decayNewTokenRatio(ratio: number): number {
  return Math.max(
    NEW_TOKEN_RATIO.min,
    ratio - (NEW_TOKEN_RATIO.init - NEW_TOKEN_RATIO.min) / NEW_TOKEN_RATIO.decaySteps,
  );
}

// Tokens a request is expected to still need: its remaining output scaled by the ratio.
function futureTokens(r: KvReq, ratio: number): number {
  return (r.targetTokens - r.generated) * ratio;
}

// Can `cand` join the running batch without the pool overflowing on the expected future tokens?
export function fitsInPool(running: KvReq[], cand: KvReq, ratio: number, maxTokens: number): boolean {
  const used = running.reduce((a, r) => a + r.promptTokens + r.generated, 0);
  const reserved = running.reduce((a, r) => a + futureTokens(r, ratio), 0);
  return used + reserved + cand.promptTokens + cand.generated + futureTokens(cand, ratio) <= maxTokens;
}

// Requests to retract (SGLang: fewest outputs first, then longest prompt) so the next step's tokens fit.
export function pickRetractions<T>(running: T[], view: (t: T) => KvReq, tokensPerStep: number, maxTokens: number): T[] {
  const order = [...running].sort(
    (a, b) => view(a).generated - view(b).generated || view(b).promptTokens - view(a).promptTokens,
  );
  const keep = new Set(running);
  const out: T[] = [];
  const used = () => [...keep].reduce((a, r) => a + view(r).promptTokens + view(r).generated, 0);
  while (keep.size > 1 && used() + keep.size * tokensPerStep > maxTokens) {
    const victim = order.shift()!;
    keep.delete(victim);
    out.push(victim);
  }
  return out;
}

// The ratio SGLang sets after a retraction: decoded + reserved steps over the outputs still allowed, at most 1.
export function retractedRatio(kept: KvReq[]): number {
  const decoded = kept.reduce((a, r) => a + r.generated, 0);
  const total = kept.reduce((a, r) => a + r.targetTokens, 0);
  return total ? Math.min(1, (decoded + RETRACT_DECODE_STEPS * kept.length) / total) : 1;
}

// SGLang's retraction line (scheduler.update_running_batch).
export function formatRetract(count: number, oldRatio: number, newRatio: number): string {
  return `KV cache pool is full. Retract requests. #retracted_reqs: ${count}, #new_token_ratio: ${oldRatio.toFixed(4)} -> ${newRatio.toFixed(4)}`;
}
