import { describe, expect, it } from 'vitest';
import { Scheduler, type SimRequest } from './scheduler.js';
import { SimLogger } from './logger.js';
import { computeCapacity, type CapacityOk } from './model.js';
import { loadProfile } from './profiles-io.js';
import { resolveSettings } from './settings.js';
import { fitsInPool, pickRetractions, retractedRatio, NEW_TOKEN_RATIO, decayNewTokenRatio } from './kv-budget.js';

// A scheduler on the default profile (steps=3) with a KV pool of `maxTokens`, logging into a string.
function makeScheduler(maxTokens: number, maxRunning = 8) {
  const profile = loadProfile();
  const settings = resolveSettings(profile, {
    speculative_algorithm: 'EAGLE',
    speculative_num_steps: 3,
    speculative_eagle_topk: 1,
  });
  const cap = computeCapacity(profile, settings) as CapacityOk;
  let log = '';
  const logger = new SimLogger((t) => {
    log += t;
  }, 1);
  const s = new Scheduler({
    profile,
    settings,
    capacity: { ...cap, maxTotalNumTokens: maxTokens, maxRunningRequests: maxRunning },
    logger,
    now: () => performance.now(),
    seed: 1,
    decodeLogInterval: 1000,
    faults: {},
    onFault: () => undefined,
  });
  return { s, log: () => log };
}

// Submit a request and resolve with the number of tokens it received once done.
function run(s: Scheduler, rid: string, promptTokens: number, targetTokens: number): Promise<number> {
  return new Promise((resolve) => {
    let got = 0;
    const req: SimRequest = {
      rid,
      promptTokens,
      targetTokens,
      finishReason: 'length',
      onTokens: (n, done) => {
        got += n;
        if (done) resolve(got);
      },
    };
    s.submit(req);
  });
}

describe('Scheduler KV pool', () => {
  it('retracts requests when the pool is full, as SGLang logs it, and still finishes every request', async () => {
    const { s, log } = makeScheduler(600);
    const got = await Promise.all([1, 2, 3, 4].map((i) => run(s, `bench-${i}`, 4, 200)));
    expect(got).toEqual([200, 200, 200, 200]);
    expect(log()).toMatch(
      /KV cache pool is full\. Retract requests\. #retracted_reqs: \d+, #new_token_ratio: \d\.\d{4} -> \d\.\d{4}/,
    );
    expect(s.usedTokens()).toBe(0);
  });

  it('a roomy pool never retracts', async () => {
    const { s, log } = makeScheduler(100_000);
    await Promise.all([1, 2, 3].map((i) => run(s, `r-${i}`, 10, 50)));
    expect(log()).not.toContain('Retract');
  });
});

describe('kv-budget', () => {
  const req = (promptTokens: number, generated: number, targetTokens: number) => ({
    promptTokens,
    generated,
    targetTokens,
  });
  it("admission reserves the running requests' expected future tokens", () => {
    expect(fitsInPool([req(10, 0, 100)], req(10, 0, 100), 0.7, 160)).toBe(true);
    expect(fitsInPool([req(10, 0, 100)], req(10, 0, 100), 0.7, 150)).toBe(false);
  });
  it('retracts the request with the fewest outputs first, never the last one', () => {
    const a = req(10, 50, 100);
    const b = req(10, 5, 100);
    expect(pickRetractions([a, b], (x) => x, 4, 70)).toEqual([b]);
    expect(pickRetractions([a], (x) => x, 4, 10)).toEqual([]);
  });
  it('the ratio decays to its floor and rises after a retraction', () => {
    let r: number = NEW_TOKEN_RATIO.init;
    for (let i = 0; i < 1000; i++) r = decayNewTokenRatio(r);
    expect(r).toBeCloseTo(NEW_TOKEN_RATIO.min);
    expect(retractedRatio([req(10, 90, 100)])).toBe(1);
  });
});
