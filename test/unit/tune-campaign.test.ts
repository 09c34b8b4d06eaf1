import { describe, expect, it } from 'vitest';
import { runCampaign } from '../../src/app/tune.js';
import type { SpectuneEvent } from '../../src/tune/events.js';
import { createFakeDeps, createWorld, TEST_SPEC } from './tune-fakes.js';

// Collect the events of a run.
function collect() {
  const events: SpectuneEvent[] = [];
  return {
    events,
    sink: (e: SpectuneEvent) => {
      events.push(e);
    },
  };
}

describe('runCampaign with fakes', () => {
  it('measures the baseline, survives the crash loop with a rollback, soaks and ends on the winner', async () => {
    const world = createWorld();
    const { events, sink } = collect();
    const res = await runCampaign(createFakeDeps(world), TEST_SPEC, { resume: false, restore: false }, sink);
    expect(res.status).toBe('done');
    // 5 measured 282 and 4 measured 277 (-1.8%, inside the 3% noise margin): the safer 4, nearer the baseline, wins.
    expect(res.best?.config).toEqual({ speculative_num_steps: 4 });
    expect(res.winnerNote).toMatch(
      /^speculative_num_steps=5 measured \+1\.8% by median, within noise \(margin 3\.0%\): kept the safer speculative_num_steps=4/,
    );
    expect(res.summary).toContain(res.winnerNote);
    expect(res.trials[0].kind).toBe('baseline');
    const failed = res.trials.find((t) => t.status === 'failed');
    expect(failed?.config).toEqual({ speculative_num_steps: 10 });
    expect(failed?.verdict?.cause).toBe('kv_cache_oom');
    expect(world.actions).toContain(`recover: trial ${failed!.index + 1} failed: crash loop`);
    expect(res.trials.some((t) => t.kind === 'soak' && t.config.speculative_num_steps === 4)).toBe(true);
    expect(world.current).toEqual({ speculative_num_steps: 4 });
    expect(events.some((e) => e.type === 'trial:end' && e.verdict?.cause === 'kv_cache_oom')).toBe(true);
    expect(events.at(-1)?.type).toBe('campaign:end');
  });

  it('with --restore ends on the original config', async () => {
    const world = createWorld();
    const res = await runCampaign(createFakeDeps(world), TEST_SPEC, { resume: false, restore: true }, () => {});
    expect(res.best?.config).toEqual({ speculative_num_steps: 4 });
    expect(world.current).toEqual({ speculative_num_steps: 1 });
  });

  it('with no winner (every config breaks a constraint) ends on the original config, not the last one tried', async () => {
    const world = createWorld();
    const spec = {
      ...TEST_SPEC,
      constraints: [
        { metric: 'outputTokensPerSec' as const, concurrency: 1, op: '>=' as const, value: 1e9, relative: false },
      ],
    };
    const res = await runCampaign(createFakeDeps(world), spec, { resume: false, restore: false }, () => {});
    expect(res.status).toBe('no-winner');
    expect(res.trials.filter((t) => t.status === 'ok').length).toBeGreaterThan(1);
    expect(world.current).toEqual({ speculative_num_steps: 1 });
  });

  it('counts infeasible predictions without spending a restart', async () => {
    const world = createWorld();
    const deps = createFakeDeps(world);
    deps.search.predict = (_h, c) =>
      Number(c.speculative_num_steps) >= 10
        ? { feasible: false, reason: 'KV does not fit', suggestion: 'cuda_graph_max_bs=8' }
        : null;
    const res = await runCampaign(deps, TEST_SPEC, { resume: false, restore: false }, () => {});
    const t10 = res.trials.find((t) => t.config.speculative_num_steps === 10);
    expect(t10?.status).toBe('infeasible');
    expect(t10?.restarts).toBe(0);
    expect(res.trials.some((t) => t.status === 'failed')).toBe(false);
  });

  it('deploys the first refused config once to confirm the prediction (confirmFirstRefusal)', async () => {
    const world = createWorld();
    const deps = createFakeDeps(world, 9);
    deps.search.predict = (_h, c) =>
      Number(c.speculative_num_steps) >= 9 ? { feasible: false, reason: 'KV does not fit', suggestion: null } : null;
    const res = await runCampaign(
      deps,
      { ...TEST_SPEC, confirmFirstRefusal: true },
      { resume: false, restore: false },
      () => {},
    );
    const byStatus = (s: string) => res.trials.filter((t) => t.status === s).map((t) => t.config.speculative_num_steps);
    expect(byStatus('failed')).toEqual([9]);
    expect(byStatus('infeasible')).toEqual([10]);
  });

  it('with a zero noise margin ends on the top measurement', async () => {
    const world = createWorld();
    const res = await runCampaign(
      createFakeDeps(world),
      { ...TEST_SPEC, noiseMargin: 0 },
      { resume: false, restore: false },
      () => {},
    );
    expect(res.best?.config).toEqual({ speculative_num_steps: 5 });
    expect(res.winnerNote).toBeNull();
    expect(world.current).toEqual({ speculative_num_steps: 5 });
  });

  it('stops at the trial budget', async () => {
    const world = createWorld();
    const spec = { ...TEST_SPEC, budget: { maxTrials: 3, maxHours: 1 } };
    const res = await runCampaign(createFakeDeps(world), spec, { resume: false, restore: false }, () => {});
    expect(res.trials.filter((t) => t.kind === 'search')).toHaveLength(3);
    expect(res.best?.config).toEqual({ speculative_num_steps: 4 });
  });
});

describe('a benchmark that fails while the service stays up (a network cut)', () => {
  // Deps whose bench of steps=4 fails `failures` times; the service says whether it stayed up (same process, healthy).
  function cutDeps(world: ReturnType<typeof createWorld>, failures: number, stayedUp: boolean) {
    const deps = createFakeDeps(world);
    let left = failures;
    world.beforeBench = (phase) => {
      if (phase === 'bench' && world.current.speculative_num_steps === 4 && left > 0) {
        left--;
        throw new Error('every request failed: no token for 10000 ms');
      }
    };
    deps.service.stayedUp = async () => stayedUp;
    return deps;
  }

  it('marks the trial interrupted and redoes it, instead of counting it against the config', async () => {
    const world = createWorld();
    const { events, sink } = collect();
    const res = await runCampaign(cutDeps(world, 1, true), TEST_SPEC, { resume: false, restore: false }, sink);
    const four = res.trials.filter((t) => t.config.speculative_num_steps === 4 && t.kind === 'search');
    expect(four.map((t) => t.status)).toEqual(['discarded', 'ok']);
    expect(four[1].index).toBe(four[0].index + 1);
    expect(res.trials.some((t) => t.status === 'failed' && t.config.speculative_num_steps === 4)).toBe(false);
    expect(res.best?.config).toEqual({ speculative_num_steps: 4 });
    expect(events.some((e) => e.type === 'trial:end' && e.trial === four[0].index + 1 && e.status === 'skipped')).toBe(
      true,
    );
    expect(
      events.some(
        (e) =>
          e.type === 'log' &&
          /not the config's fault \(a network cut\?\): the trial is skipped and redone once/.test(e.message),
      ),
    ).toBe(true);
    expect(world.actions.filter((a) => a.startsWith('recover'))).toEqual(['recover: trial 11 failed: crash loop']); // only the crash loop of steps=10 rolled back
  });

  it('a second failure of the same trial counts against the config (no endless redo)', async () => {
    const world = createWorld();
    const res = await runCampaign(cutDeps(world, 2, true), TEST_SPEC, { resume: false, restore: false }, () => {});
    const four = res.trials.filter((t) => t.config.speculative_num_steps === 4 && t.kind === 'search');
    expect(four.map((t) => t.status)).toEqual(['discarded', 'failed']);
    expect(world.actions).toContain(
      `recover: trial ${four[1].index + 1} failed: benchmark failed: every request failed: no token for 10000 ms`,
    );
  });

  it('a benchmark that measured nothing (every request failed, no exception) is interrupted and redone too', async () => {
    const world = createWorld();
    const deps = createFakeDeps(world);
    let left = 1;
    const realRun = deps.bench.run;
    deps.bench.run = async (phase, onEvent, signal) => {
      const out = await realRun(phase, onEvent, signal);
      if (phase !== 'bench' || world.current.speculative_num_steps !== 4 || left === 0) return out;
      left--;
      const none = { ...out.runs[0], requests: { ok: 0, failed: 4 }, decodeTokensPerSec: null };
      return { ...out, runs: [none as unknown as (typeof out.runs)[0]] };
    };
    deps.service.stayedUp = async () => true;
    const res = await runCampaign(deps, TEST_SPEC, { resume: false, restore: false }, () => {});
    const four = res.trials.filter((t) => t.config.speculative_num_steps === 4 && t.kind === 'search');
    expect(four.map((t) => t.status)).toEqual(['discarded', 'ok']);
    expect(four[1].objective).toBe(277);
    expect(res.best?.config).toEqual({ speculative_num_steps: 4 });
  });

  it('a failure with the service down or restarted counts against the config at once', async () => {
    const world = createWorld();
    const res = await runCampaign(cutDeps(world, 1, false), TEST_SPEC, { resume: false, restore: false }, () => {});
    const four = res.trials.filter((t) => t.config.speculative_num_steps === 4 && t.kind === 'search');
    expect(four.map((t) => t.status)).toEqual(['failed']);
  });
});

describe('an engine killed during a benchmark (issue 19)', () => {
  const KILLED = {
    class: 'external_kill',
    cause: null,
    confidence: 'low',
    summary: 'Killed from outside (status=9/KILL)',
    evidence: [],
    ruledOut: [],
    remediation: [],
    crashed: true,
  } as const;
  // Deps whose bench of steps=4 loses `failed` of its 4 requests (the engine died mid-run, systemd restarted it).
  function killedDeps(world: ReturnType<typeof createWorld>, failed: number, throws = false) {
    const deps = createFakeDeps(world);
    const realRun = deps.bench.run;
    deps.bench.run = async (phase, onEvent, signal) => {
      const out = await realRun(phase, onEvent, signal);
      if (phase !== 'bench' || world.current.speculative_num_steps !== 4) return out;
      if (throws) throw new Error('every request failed: connection reset');
      const ok = 4 - failed;
      return { ...out, runs: [{ ...out.runs[0], requests: { ok, failed } } as (typeof out.runs)[0]] };
    };
    deps.service.stayedUp = async () => world.current.speculative_num_steps !== 4;
    deps.service.diagnoseDeath = async () => ({ ...KILLED, evidence: [], ruledOut: [], remediation: [] });
    return deps;
  }

  for (const c of [
    { what: 'some requests failed, the rest measured', failed: 2, throws: false },
    { what: 'the benchmark threw', failed: 4, throws: true },
  ]) {
    it(`is a failed trial with the journal's verdict, rolled back, never a violation nor known-good (${c.what})`, async () => {
      const world = createWorld();
      const { events, sink } = collect();
      const res = await runCampaign(
        killedDeps(world, c.failed, c.throws),
        TEST_SPEC,
        { resume: false, restore: false },
        sink,
      );
      const four = res.trials.filter((t) => t.config.speculative_num_steps === 4 && t.kind === 'search');
      expect(four.map((t) => t.status)).toEqual(['failed']);
      expect(four[0].verdict?.class).toBe('external_kill');
      expect(four[0].violations[0]).toMatch(/^the engine died during the benchmark \(external_kill\): /);
      expect(four[0].objective).toBeNull();
      expect(
        world.actions.some((a) =>
          a.startsWith(
            `recover: trial ${four[0].index + 1} failed: the engine died during the benchmark (external_kill)`,
          ),
        ),
      ).toBe(true);
      expect(res.best?.config).not.toEqual({ speculative_num_steps: 4 });
      expect(
        events.some(
          (e) =>
            e.type === 'trial:end' &&
            e.trial === four[0].index + 1 &&
            e.status === 'failed' &&
            e.verdict?.class === 'external_kill',
        ),
      ).toBe(true);
      expect(events.some((e) => e.type === 'diagnosis' && e.verdict.class === 'external_kill')).toBe(true);
    });
  }
});

describe('interrupt and resume', () => {
  it('an abort mid-trial rolls back, and resume redoes only that trial', async () => {
    const world = createWorld();
    const ac = new AbortController();
    let benches = 0;
    world.beforeBench = (phase) => {
      if (phase === 'bench' && ++benches === 4) {
        ac.abort();
        throw new Error('aborted');
      }
    };
    const first = await runCampaign(
      createFakeDeps(world),
      TEST_SPEC,
      { resume: false, restore: false },
      () => {},
      ac.signal,
    );
    expect(first.status).toBe('interrupted');
    expect(world.current).toEqual({ speculative_num_steps: 3 });
    world.beforeBench = undefined;
    const second = await runCampaign(createFakeDeps(world), TEST_SPEC, { resume: true, restore: false }, () => {});
    const done = second.trials.filter((t) => t.status !== 'discarded' && t.kind === 'search');
    const steps = done.map((t) => t.config.speculative_num_steps);
    expect(new Set(steps).size).toBe(steps.length);
    expect(steps).toHaveLength(9);
    expect(second.trials.filter((t) => t.status === 'discarded').map((t) => t.config)).toEqual([
      { speculative_num_steps: 4 },
    ]);
    expect(world.current).toEqual({ speculative_num_steps: 4 });
  });

  it('resume after a kill during a crash loop first brings the service back to the last good config', async () => {
    const world = createWorld();
    const deps = createFakeDeps(world);
    const realDeploy = deps.service.deploy;
    deps.service.deploy = async (c, w, s) => {
      if (c.speculative_num_steps === 10) {
        world.current = { ...c };
        throw new Error('SIGKILL');
      }
      return realDeploy(c, w, s);
    };
    await expect(runCampaign(deps, TEST_SPEC, { resume: false, restore: false }, () => {})).rejects.toThrow('SIGKILL');
    expect(world.current).toEqual({ speculative_num_steps: 10 });
    const said: string[] = [];
    const res = await runCampaign(createFakeDeps(world), TEST_SPEC, { resume: true, restore: false }, (e) => {
      if (e.type === 'log') said.push(e.message);
      else if (e.type === 'trial:start') said.push('trial:start');
    });
    expect(world.actions).toContain('recover: resume after an interrupted trial');
    // the operator (and the fault suite) is told the service is back before the next trial starts
    expect(said.indexOf('resume: the service is back on its known-good config (rolled back)')).toBeGreaterThan(-1);
    expect(said.indexOf('resume: the service is back on its known-good config (rolled back)')).toBeLessThan(
      said.indexOf('trial:start'),
    );
    expect(res.trials.filter((t) => t.status === 'failed').map((t) => t.config)).toEqual([
      { speculative_num_steps: 10 },
    ]);
    expect(world.current).toEqual({ speculative_num_steps: 4 });
  });

  it('resume after a kill, with the host already back on known-good (the lease), restarts nothing before the next trial (issue 19)', async () => {
    const world = createWorld();
    const deps = createFakeDeps(world);
    let benches = 0;
    world.beforeBench = (phase) => {
      if (phase === 'bench' && ++benches === 4) throw new Error('SIGKILL');
    };
    deps.service.recover = async () => {
      throw new Error('SIGKILL');
    }; // spectune dies: no rollback of its own
    await expect(runCampaign(deps, TEST_SPEC, { resume: false, restore: false }, () => {})).rejects.toThrow('SIGKILL');
    world.current = { ...world.lastGood }; // the host-side lease restored known-good
    world.beforeBench = undefined;
    const deploysBefore = world.deploys;
    const lines: string[] = [];
    await runCampaign(
      createFakeDeps(world),
      { ...TEST_SPEC, budget: { ...TEST_SPEC.budget, maxTrials: 5 } },
      { resume: true, restore: false },
      (e) => {
        if (e.type === 'log') lines.push(e.message);
      },
    );
    expect(world.actions.filter((a) => a.startsWith('recover'))).toEqual([]);
    expect(lines).toContain('resume: the service is healthy on its known-good config');
    expect(world.deploys - deploysBefore).toBeGreaterThan(0);
  });

  it('an overnight interruption does not spend the hours budget: only running time counts', async () => {
    const world = createWorld();
    const ac = new AbortController();
    let benches = 0;
    world.beforeBench = (phase) => {
      if (phase === 'bench' && ++benches === 4) {
        ac.abort();
        throw new Error('aborted');
      }
    };
    const spec = { ...TEST_SPEC, budget: { maxTrials: 20, maxHours: 1 } };
    await runCampaign(createFakeDeps(world), spec, { resume: false, restore: false }, () => {}, ac.signal);
    world.beforeBench = undefined;
    const nextMorning = 10 * 3_600_000;
    const res = await runCampaign(
      createFakeDeps(world, 10, nextMorning),
      spec,
      { resume: true, restore: false },
      () => {},
    );
    expect(res.summary).toMatch(/^search finished/);
    expect(res.trials.filter((t) => t.kind === 'search' && t.status !== 'discarded')).toHaveLength(9);
    const spans = world.spans.get(res.campaignId) ?? [];
    expect(spans).toHaveLength(2);
    expect(spans[1].startedAt).toBeGreaterThan(nextMorning);
  });

  it('the hours budget adds up the running time of every run (the search stops early, then soaks)', async () => {
    const world = createWorld();
    const ac = new AbortController();
    let benches = 0;
    world.beforeBench = (phase) => {
      if (phase === 'bench' && ++benches === 4) {
        ac.abort();
        throw new Error('aborted');
      }
    };
    // The fake clock ticks 1 s per reading: a whole campaign reads it well over 200 times.
    const spec = { ...TEST_SPEC, budget: { maxTrials: 20, maxHours: 100 / 3600 } };
    const first = await runCampaign(
      createFakeDeps(world),
      spec,
      { resume: false, restore: false },
      () => {},
      ac.signal,
    );
    const firstSpan = (world.spans.get(first.campaignId) ?? [])[0];
    world.beforeBench = undefined;
    const res = await runCampaign(
      createFakeDeps(world, 10, 10 * 3_600_000),
      spec,
      { resume: true, restore: false },
      () => {},
    );
    expect(res.trials.filter((t) => t.kind === 'search' && t.status !== 'discarded').length).toBeLessThan(9);
    const spans = world.spans.get(res.campaignId) ?? [];
    const second = spans[1].lastActiveAt - spans[1].startedAt;
    expect(firstSpan.lastActiveAt - firstSpan.startedAt + second).toBeGreaterThanOrEqual(100_000);
    expect(second).toBeLessThan(100_000);
  });
});
