// A real campaign on a real systemd test host over SSH: the SIMULATED sglang unit, speculative_num_steps 1..10.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTestHosts, type TestHost } from './helpers/testhosts.js';
import {
  installSimUnit,
  readStepsInForce,
  removeSimUnit,
  renderSimUnit,
  runCli,
  writeTuneConfig,
  type CliRun,
} from './tune-support.js';
import { trueOptimum } from './tune-optimum.js';

const UNIT = 'spectune-tune-e2e.service';
const PORT = 31601;
/** A grid over steps 1..10 from steps=3: 9 deploys, a rollback after each of the two failing values (9, 10), a landing. */
const GRID_RESTARTS = 12;

interface TrialJson {
  index: number;
  kind: string;
  status: string;
  config: Record<string, number>;
  restarts: number;
  objective: number | null;
  verdict: { class: string; cause: string | null; evidence: { text: string }[] } | null;
}

describe('spectune tune on a real systemd host', () => {
  let host: TestHost;
  let run: CliRun;
  let result: { status: string; restarts: number; best: TrialJson; trials: TrialJson[]; deployed: string };
  let dir: string;

  beforeAll(async () => {
    host = loadTestHosts().find((h) => h.name === 'th2') ?? loadTestHosts()[0];
    installSimUnit(host, UNIT, PORT);
    const written = writeTuneConfig(host, UNIT, PORT);
    const config = written.config;
    dir = written.dir;
    const env = { SPECTUNE_ACTION_LOG: join(mkdtempSync(join(tmpdir(), 'spectune-actions-')), 'actions.jsonl') };
    run = await runCli(['tune', '-c', config, '--json', '--confirm-probes', '--ssh-config', host.sshConfig], env);
    expect(run.code, `spectune tune failed:\n${run.stderr.slice(-3000)}`).toBe(0);
    result = JSON.parse(run.stdout) as typeof result;
  });
  afterAll(() => {
    if (host) removeSimUnit(host, UNIT);
  });

  it('finishes and finds the profile optimum with fewer restarts than the grid', async () => {
    expect(run.code, run.stderr.slice(-3000)).toBe(0);
    expect(result.status).toBe('done');
    const opt = await trueOptimum();
    const steps = result.best.config.speculative_num_steps;
    expect(opt.speedOf(steps) / opt.best).toBeGreaterThanOrEqual(0.98);
    expect(result.restarts).toBeLessThan(GRID_RESTARTS);
  });

  it('survives the init-OOM crash loop with a correct verdict and a verified rollback', () => {
    const failed = result.trials.filter((t) => t.status === 'failed');
    expect(failed.length).toBeGreaterThan(0);
    for (const f of failed) {
      expect(['crash_loop', 'kv_cache_oom']).toContain(f.verdict?.class);
      expect(f.verdict?.class === 'kv_cache_oom' || f.verdict?.cause === 'kv_cache_oom').toBe(true);
      expect(f.verdict?.evidence.some((e) => /Not enough memory/.test(e.text))).toBe(true);
    }
    const from = run.events.findIndex((e) => e.type === 'trial:start' && e.trial === failed[0].index + 1);
    const to = run.events.findIndex((e, i) => i > from && e.type === 'trial:end');
    const window = run.events.slice(from, to);
    const iRollback = window.findIndex((e) => e.type === 'service:action' && e.action === 'rollback');
    expect(iRollback).toBeGreaterThan(0);
    expect(window.slice(iRollback).some((e) => e.type === 'service:ready')).toBe(true);
  });

  it('leaves the service on the winner, healthy', async () => {
    expect(readStepsInForce(host, UNIT)).toBe(result.best.config.speculative_num_steps);
    const res = await fetch(`http://${host.ip}:${PORT}/health`);
    expect(res.status).toBe(200);
    expect(result.deployed).toContain(`--speculative-num-steps ${result.best.config.speculative_num_steps}`);
  });

  it("reports what runs on the host and the operator's own ExecStart with the winner patched in", async () => {
    const steps = result.best.config.speculative_num_steps;
    const md = await runCli(['report', '--db', join(dir, 'tune.db')], {});
    expect(md.code, md.stderr).toBe(0);
    const own = /^ExecStart=(.*)$/m.exec(renderSimUnit(UNIT, PORT))![1];
    expect(md.stdout).toContain(`the service ran **speculative_num_steps=${steps}**, the winner; it was healthy.`);
    const keep = md.stdout.slice(md.stdout.indexOf('## The exact flags to keep'));
    expect(keep).toMatch(new RegExp(`^### \\S+ ${UNIT.replace(/\./g, '\\.')}$`, 'm'));
    expect(keep).toContain(
      `\`\`\`\nExecStart=${own.replace(/--speculative-num-steps \d+/, `--speculative-num-steps ${steps}`)}\n\`\`\``,
    );
    expect(md.stdout.split('\n')[0]).toMatch(/^> \*\*SIMULATED/);
  });
});
