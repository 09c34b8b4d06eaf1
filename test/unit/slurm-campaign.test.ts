// The Slurm campaign on the model cluster (src/slurm/model-cluster.ts: Slurm's states, scancel/KillWait and output
// lines, an engine answering on loopback) with the real SQLite store and search: parallel = sequential winner,
// confirmation on another node, no job left running after success, Ctrl-C or a killed run resumed.
import { afterEach, describe, expect, it } from 'vitest';
import { validateConfig, type SpectuneConfig } from '../../src/config/index.js';
import { createSlurmStore, slurmSpecFromConfig } from '../../src/app/tune-slurm.js';
import { createSearchPort } from '../../src/app/tune-search.js';
import {
  openStore,
  listSlurmJobs,
  listTrials,
  recordTrialStart,
  createCampaign,
  recordSlurmJob,
  type Db,
} from '../../src/store/index.js';
import {
  createModelCluster,
  readJobVerdict,
  runSlurmCampaign,
  type ModelCluster,
  type SlurmCampaignDeps,
} from '../../src/slurm/index.js';
import type { SpectuneEvent } from '../../src/tune/events.js';

/** Decode tok/s by speculative_num_steps (the seed's curve: 5 wins). */
const TPS: Record<number, number> = { 1: 123, 2: 186, 3: 234, 4: 277, 5: 282, 6: 279 };

// A validated slurm config over the grid 1..6.
function config(parallel?: number): SpectuneConfig {
  const r = validateConfig({
    target: {
      engine: 'sglang',
      endpoint: 'http://node:30000',
      manager: 'slurm',
      hosts: [{ host: 'login', unit: 'tune' }],
      slurm: {
        mem: '800M',
        timeLimit: '10m',
        command: 'spectune sim --port $SPECTUNE_PORT --speculative-num-steps 1',
        drain: '1s',
        ...(parallel ? { parallel } : {}),
      },
    },
    space: { speculative_num_steps: { min: 1, max: 6 } },
    search: { strategy: 'grid', noiseMargin: '1%' },
    objective: { metric: 'decodeTokensPerSec.mean', concurrency: 1 },
    benchmark: { concurrency: [1], requests: 2, timeouts: { ready: '20s' } },
    budget: { trials: 6 },
    store: ':memory:',
  });
  if (!r.ok) throw new Error(r.errors.join('\n'));
  return r.config;
}

let model: ModelCluster | null = null;
let db: Db | null = null;
afterEach(async () => {
  await model?.close();
  db?.close();
  model = null;
  db = null;
});

// Ports over the model cluster and a fresh SQLite store.
async function setup(opts: { drainMs?: number; nodes?: string[] } = {}) {
  model = await createModelCluster({
    nodes: opts.nodes ?? ['n1', 'n2', 'n3'],
    killWaitSec: 1,
    startMs: 50,
    readyMs: 150,
    drainMs: opts.drainMs ?? 200,
    benchMs: 200,
    speed: (c) => TPS[Number(c.speculative_num_steps)] ?? 100,
  });
  db = openStore(':memory:');
  return { model, db };
}

// Deps and spec for one run.
function wire(cfg: SpectuneConfig, m: ModelCluster, d: Db, free: number) {
  const search = createSearchPort(cfg);
  const deps: SlurmCampaignDeps = {
    client: m.client,
    store: createSlurmStore(d, cfg, 'login'),
    propose: (h) => search.propose(h),
    benchFor: (u) => m.benchFor(u),
    now: Date.now,
  };
  const spec = { ...slurmSpecFromConfig(cfg, free), urlFor: m.urlFor, pollMs: 25 };
  return { deps, spec };
}

describe('slurm campaign (model cluster, real store and search)', () => {
  it('3 nodes in parallel find the sequential winner, spread over the nodes, confirm it elsewhere and leave no job', async () => {
    const { model: m, db: d } = await setup();
    const seq = wire(config(1), m, d, 3);
    const a = await runSlurmCampaign(seq.deps, seq.spec, { resume: false }, () => {});
    const par = wire(config(3), m, d, 3);
    const events: SpectuneEvent[] = [];
    const b = await runSlurmCampaign(par.deps, par.spec, { resume: false }, (e) => events.push(e));
    expect(a.best?.config).toEqual({ speculative_num_steps: 5 });
    expect(b.best?.config).toEqual(a.best?.config);
    // Speed is bench/slurm-parallel.mjs's to show; here: the trials really spread over the three nodes.
    expect(new Set(Object.values(b.nodes))).toEqual(new Set(['n1', 'n2', 'n3']));
    expect(new Set(Object.values(a.nodes)).size).toBeGreaterThanOrEqual(1);
    const confirm = b.trials.find((t) => t.kind === 'soak');
    const won = b.trials.find((t) => t.kind === 'search' && t.config.speculative_num_steps === 5);
    expect(confirm && won && b.nodes[confirm.index]).toBeTruthy();
    expect(b.nodes[confirm!.index]).not.toBe(b.nodes[won!.index]);
    expect(b.summary).toMatch(/confirmed on n\d; \d+ trials as Slurm jobs, up to 3 at once/);
    expect(m.liveJobs()).toEqual([]);
    expect(listSlurmJobs(d, b.campaignId, { open: true })).toEqual([]);
    expect(listSlurmJobs(d, b.campaignId).length).toBe(b.trials.length);
    expect(events.some((e) => e.type === 'slurm:job' && e.state === 'RUNNING')).toBe(true);
    expect(b.deployed).toMatch(/^exec spectune sim --port \$SPECTUNE_PORT --speculative-num-steps 5$/m);
  }, 60_000);

  it('Ctrl-C mid-batch cancels every job; --resume finishes the campaign', async () => {
    const { model: m, db: d } = await setup();
    const w = wire(config(3), m, d, 3);
    const ac = new AbortController();
    const onEvent = (e: SpectuneEvent) => {
      if (e.type === 'trial:phase' && e.phase === 'bench' && e.trial === 2) ac.abort();
    };
    const r = await runSlurmCampaign(w.deps, w.spec, { resume: false }, onEvent, ac.signal);
    expect(r.status).toBe('interrupted');
    expect(m.liveJobs()).toEqual([]);
    expect(listSlurmJobs(d, r.campaignId, { open: true })).toEqual([]);
    const again = await runSlurmCampaign(w.deps, w.spec, { resume: true }, () => {});
    expect(again.campaignId).toBe(r.campaignId);
    expect(again.best?.config).toEqual({ speculative_num_steps: 5 });
    expect(m.liveJobs()).toEqual([]);
  }, 60_000);

  it('a run killed outright leaves jobs; --resume cancels them by id and by name', async () => {
    const { model: m, db: d } = await setup();
    const cfg = config(3);
    const w = wire(cfg, m, d, 3);
    // What a SIGKILLed spectune leaves: a campaign with a running trial, one job in the store, one only in squeue.
    const c = createCampaign(d, { name: w.spec.name, engine: 'sglang', config: {} });
    recordTrialStart(d, {
      campaignId: c.id,
      params: { speculative_num_steps: 1 },
      purpose: 'baseline',
      reason: 'baseline',
    });
    const script = (t: number) =>
      `#!/bin/bash\n#SBATCH --job-name=tune-c${c.id}-t${t}\n#SBATCH --nodelist=n${t}\nexport SPECTUNE_PORT=30000\nexec spectune sim --port $SPECTUNE_PORT\n`;
    const stored = await m.client.submit(script(1));
    recordSlurmJob(d, { campaignId: c.id, trialSeq: 1, jobId: stored, login: 'login' });
    const unrecorded = await m.client.submit(script(2));
    await new Promise((r) => setTimeout(r, 100));
    expect(m.liveJobs().sort()).toEqual([stored, unrecorded].sort());
    const events: SpectuneEvent[] = [];
    const r = await runSlurmCampaign(w.deps, w.spec, { resume: true }, (e) => events.push(e));
    expect(r.campaignId).toBe(c.id);
    const cancelled = events
      .filter((e) => e.type === 'slurm:job' && e.trial === null && e.state === 'cancelled')
      .map((e) => (e as { jobId: string }).jobId);
    expect(cancelled.sort()).toEqual([stored, unrecorded].sort());
    expect(m.liveJobs()).toEqual([]);
    expect(listTrials(d, c.id)[0].state).toBe('skipped');
  }, 60_000);

  it('a drain longer than KillWait is signalled first (no SIGKILL); a plain scancel of it is a stop timeout', async () => {
    const { model: m, db: d } = await setup({ drainMs: 1500, nodes: ['n1', 'n2'] });
    const cfg = config(2);
    const w = wire({ ...cfg, budget: { trials: 1, hours: null } }, m, d, 2);
    const r = await runSlurmCampaign(
      w.deps,
      { ...w.spec, drainSec: 2, confirmElsewhere: false },
      { resume: false },
      () => {},
    );
    expect(r.trials.every((t) => t.status === 'ok')).toBe(true);
    expect([...m.jobs.values()].every((j) => j.final?.state === 'COMPLETED')).toBe(true);
    const id = await m.client.submit(
      '#!/bin/bash\n#SBATCH --job-name=x\n#SBATCH --output=/o/%j.out\nexport SPECTUNE_PORT=1\nexec spectune sim\n',
    );
    await new Promise((res) => setTimeout(res, 100));
    await m.client.cancel(id);
    await new Promise((res) => setTimeout(res, 1100));
    const v = await readJobVerdict(m.client, id, { killWaitSec: 1, cancelledByUs: true });
    expect([v?.verdict.class, v?.verdict.detail, v?.job.exit]).toEqual([
      'stop_timeout',
      'slurm_killwait',
      { code: 0, signal: 9 },
    ]);
  }, 60_000);
});
