// Seed 1 for real: 16 streaming benchmark requests in flight, an operator `systemctl stop` with a short
// TimeoutStopSec -> the real "State 'stop-sigterm' timed out. Killing." -> diagnose says stop_timeout, attributed to
// that stop (action log, by=operator), not OOM. And spectune's own restart never causes it: it finishes its own
// benchmark first, warns about the drain, and waits for the other in-flight requests.
import { appendFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBench } from '../../src/bench/index.js';
import type { SpectuneEvent } from '../../src/tune/events.js';
import { createFileActionLog, createServiceController } from '../../src/service/index.js';
import {
  hostEpoch,
  installSimUnit,
  journalText,
  removeSimUnit,
  runCli,
  sh,
  waitHealthy,
  type SimUnit,
} from './service-helpers.js';

/** Short enough that 16 requests of 2048 tokens (~25 s each on the sim) cannot drain in time. */
const TIMEOUT_STOP_SEC = 6;
/** Long answers keep the requests in flight through the stop. */
const LONG_OUTPUT_TOKENS = 2048;
/** Time for the benchmark's 16 requests to be admitted and streaming. */
const ADMIT_MS = 2500;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// A benchmark of 16 concurrent streaming requests (ids bench-1..16), cancellable.
function startBench(url: string, signal: AbortSignal, requests = 16, outputTokens = LONG_OUTPUT_TOKENS) {
  return runBench(
    {
      url,
      api: 'sglang',
      concurrency: [Math.min(16, requests)],
      requests,
      outputTokens,
      warmup: 0,
      scrapeEngine: false,
    },
    () => {},
    signal,
  ).catch((e: unknown) => e);
}

// Someone else's request (rid other-N, so it cannot collide with the benchmark's bench-N): true when it streamed to the end.
async function otherClientRequest(url: string, i: number, tokens: number): Promise<boolean> {
  const body = {
    text: 'Tell me a long story.',
    rid: `other-${i}`,
    stream: true,
    sampling_params: { max_new_tokens: tokens, min_new_tokens: tokens, ignore_eos: true },
  };
  try {
    const res = await fetch(`${url}/generate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return res.status === 200 && (await res.text()).includes('data: [DONE]');
  } catch {
    return false;
  }
}

describe('seed 1: stop with a benchmark in flight', () => {
  let u: SimUnit;
  beforeAll(async () => {
    u = await installSimUnit('seed1', 31401, { timeoutStopSec: TIMEOUT_STOP_SEC });
    await waitHealthy(u.endpoint);
  });
  afterAll(async () => {
    if (u) {
      await removeSimUnit(u.host, u.unit);
      await u.host.close();
    }
  });

  it('an operator stop mid-benchmark ends in the real stop-sigterm timeout, diagnosed as stop_timeout by the operator, not OOM', async () => {
    const since = await hostEpoch(u.host);
    const ac = new AbortController();
    const bench = startBench(u.endpoint, ac.signal);
    await sleep(ADMIT_MS);
    appendFileSync(
      u.actionLog,
      `${JSON.stringify({ ts: new Date().toISOString(), action: 'stop', unit: u.unit, by: 'operator', host: u.th.name, why: 'operator ran systemctl stop' })}\n`,
    );
    await sh(u.host, ['systemctl', 'stop', u.unit]);
    ac.abort();
    await bench;

    const journal = await journalText(u.host, u.unit, since);
    expect(journal).toMatch(/State 'stop-sigterm' timed out\. Killing\./);
    expect(journal).toMatch(/Gracefully exiting\.\.\. Remaining number of requests 16\b/);
    expect(journal).toMatch(/bench-\d+/);

    const dir = mkdtempSync(join(tmpdir(), 'spectune-seed1-'));
    const file = join(dir, 'journal.json');
    writeFileSync(file, await sh(u.host, ['journalctl', '-u', u.unit, '-o', 'json', '--no-pager', `--since=${since}`]));
    const d = await runCli([
      'diagnose',
      file,
      '--actions',
      u.actionLog,
      '--unit',
      u.unit,
      '--engine',
      'sglang',
      '--json',
    ]);
    expect(d.code, d.stderr).toBe(0);
    const verdict = (
      JSON.parse(d.stdout) as { verdict: { class: string; summary: string; facts?: Record<string, unknown> } }
    ).verdict;
    expect(verdict.class).toBe('stop_timeout');
    expect(verdict.class).not.toBe('host_oom_kill');
    expect(verdict.facts?.stop_by).toBe('operator');
    expect(verdict.summary).toMatch(/operator/);
  });

  it("spectune's own restart finishes its benchmark first, warns about the drain, waits for in-flight requests: no stop timeout", async () => {
    await sh(u.host, ['systemctl', 'start', u.unit]);
    await waitHealthy(u.endpoint);
    const events: SpectuneEvent[] = [];
    const ctl = createServiceController({
      host: u.host,
      unit: u.unit,
      engine: 'sglang',
      endpoint: u.endpoint,
      actionLog: createFileActionLog(u.actionLog),
      onEvent: (e) => events.push(e),
    });
    const ours = new AbortController();
    const ourBench = startBench(u.endpoint, ours.signal);
    // Someone else's load, which spectune must not cut off: 16 requests of 600 tokens (a drain longer than TimeoutStopSec).
    const theirs = Promise.all(Array.from({ length: 16 }, (_, i) => otherClientRequest(u.endpoint, i + 1, 600)));
    await sleep(ADMIT_MS);
    const since = await hostEpoch(u.host);
    let quiescedAt = 0;
    await ctl.restart('seed 1: restart with a benchmark in flight', {
      quiesce: async () => {
        ours.abort();
        await ourBench;
        quiescedAt = Date.now();
      },
    });
    const other = await theirs;
    const ready = await ctl.waitReady();
    expect(ready.status).toBe('ready');

    expect(other).toEqual(new Array(16).fill(true));
    const restartAction = events.find((e) => e.type === 'service:action' && e.action === 'restart');
    expect(quiescedAt).toBeGreaterThan(0);
    expect(restartAction?.ts).toBeGreaterThanOrEqual(quiescedAt);
    const warn = events.find((e) => e.type === 'log' && e.level === 'warn' && /TimeoutStopSec/.test(e.message));
    expect(warn && warn.type === 'log' ? warn.message : '').toMatch(
      new RegExp(`longer than TimeoutStopSec=${TIMEOUT_STOP_SEC}s.*Fix: add TimeoutStopSec=\\d+`),
    );
    const journal = await journalText(u.host, u.unit, since);
    expect(journal).toMatch(/Stopping|Stopped|Started/);
    expect(journal).not.toMatch(/timed out\. Killing/);
  });
});
