// `spectune demo` end to end: the built CLI, the SIMULATED engine under the process manager, a whole campaign.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { trueOptimum } from './tune-optimum.js';
import { runCli, type CliRun } from './tune-support.js';

/** The demo's constraint protects the aggregate throughput of this many users. */
const DEMO_BATCH = 4;
/** The README promises the whole demo in under two minutes. */
const DEMO_LIMIT_MS = 120_000;

interface DemoJson {
  outDir: string;
  wallMs: number;
  reports: { markdown: string; html: string };
  final: { settings: { speculative_num_steps: number }; healthy: boolean };
  campaign: {
    status: string;
    restarts: number;
    best: { config: { speculative_num_steps: number } };
    trials: {
      status: string;
      config: { speculative_num_steps: number };
      verdict: { class: string; cause: string | null } | null;
    }[];
  };
}

describe('spectune demo', () => {
  let run: CliRun;
  let out: DemoJson;
  let started = 0;
  let elapsed = 0;

  beforeAll(async () => {
    started = Date.now();
    run = await runCli(['demo', '--json', '--out', mkdtempSync(join(tmpdir(), 'spectune-demo-e2e-'))], {});
    elapsed = Date.now() - started;
    expect(run.code, `spectune demo failed:\n${run.stderr.slice(-3000)}`).toBe(0);
    out = JSON.parse(run.stdout) as DemoJson;
  });

  it('finishes in under two minutes on the profile optimum', async () => {
    expect(elapsed).toBeLessThan(DEMO_LIMIT_MS);
    expect(out.campaign.status).toBe('done');
    const opt = await trueOptimum(DEMO_BATCH);
    expect(opt.speedOf(out.campaign.best.config.speculative_num_steps) / opt.best).toBeGreaterThanOrEqual(0.98);
  });

  it('meets the steps=10 failure: a crash loop diagnosed as kv_cache_oom, rolled back', () => {
    const t10 = out.campaign.trials.find((t) => t.config.speculative_num_steps === 10);
    expect(t10?.status).toBe('failed');
    expect(t10?.verdict?.class).toBe('crash_loop');
    expect(t10?.verdict?.cause).toBe('kv_cache_oom');
    const from = run.events.findIndex(
      (e) => e.type === 'trial:start' && (e.config as { speculative_num_steps: number }).speculative_num_steps === 10,
    );
    const to = run.events.findIndex((e, i) => i > from && e.type === 'trial:end');
    const window = run.events.slice(from, to);
    const iRollback = window.findIndex((e) => e.type === 'service:action' && e.action === 'rollback');
    expect(iRollback).toBeGreaterThan(0);
    expect(window.slice(iRollback).some((e) => e.type === 'service:ready')).toBe(true);
  });

  it('ends with the service on the winner, healthy, and writes the report', () => {
    expect(out.final.healthy).toBe(true);
    expect(out.final.settings.speculative_num_steps).toBe(out.campaign.best.config.speculative_num_steps);
    expect(existsSync(out.reports.markdown)).toBe(true);
    expect(readFileSync(out.reports.html, 'utf8')).toContain('<svg');
  });
});
