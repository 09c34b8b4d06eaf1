// Property-based fuzzing (issue 11 item 6) at CI size, on the build (dist/, rebuilt when src/ is newer: main() loads
// its commands by a dynamic import that vite cannot follow to .ts files): the same properties as the fault suite's fuzz
// row (bench/faults/_fuzz-cases.mjs, 10,000 cases per family there). A failure prints the shrunk counterexample and
// the seed to replay it (SPECTUNE_FUZZ_SEED=...).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: plain ESM module shared with the bench (no types)
import { createScratch, loadLib, runFamily } from '../../bench/faults/_fuzz-cases.mjs';
import { ensureCliBuilt } from './cli-run.js';

/** Cases per family here (a few seconds each on 2 cores). */
const RUNS = Number(process.env.SPECTUNE_FUZZ_RUNS ?? 200);
/** One seed in CI, so a red run is the code's fault; set SPECTUNE_FUZZ_SEED to explore others. */
const SEED = Number(process.env.SPECTUNE_FUZZ_SEED ?? 20261201);

type Family = 'configs' | 'flags' | 'journals' | 'sse';
let lib: unknown;
let scratch: { dir: string; cleanup: () => void };

beforeAll(async () => {
  // (the build may take a while on a busy machine)
  ensureCliBuilt();
  lib = await loadLib(new URL('../../dist/', import.meta.url));
  scratch = createScratch();
}, 180_000);
afterAll(() => scratch?.cleanup());

describe(`fuzz (seed ${SEED}, ${RUNS} cases per family)`, () => {
  for (const family of ['configs', 'flags', 'journals', 'sse'] as Family[]) {
    it(`${family}: valid results or coded errors only, no stack trace, no hang`, async () => {
      const r = (await runFamily(lib, family, RUNS, scratch, SEED)) as { cases: number; failures: unknown[] };
      expect(r.failures).toEqual([]);
      expect(r.cases).toBeGreaterThanOrEqual(RUNS * 0.9);
    }, 120_000);
  }
});
