// A campaign on a model split across two real systemd test hosts: rank0 (th1, the endpoint) and rank1 (th2), the
// SIMULATED two-node SGLang. Every trial is deployed to both units, a crashing config is diagnosed from both journals
// and rolled back on both, and the campaign leaves both units on the winner.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestHost } from './helpers/testhosts.js';
import { readStepsInForce, runCli, type CliRun } from './tune-support.js';
import {
  readDropInVersions,
  startTwoRankGroup,
  stopTwoRankGroup,
  unitActiveState,
  type TwoRankGroup,
} from './two-host-support.js';

const UNIT = 'spectune-tune-2h-e2e.service';
const PORT = 31701;
/** rank0's dist-init port; rank1 reaches it through the relay on this machine. */
const DIST_PORT = 31702;

interface TrialJson {
  index: number;
  kind: string;
  status: string;
  config: Record<string, number>;
  verdict: {
    class: string;
    cause: string | null;
    summary: string;
    evidence: { text: string; source?: string }[];
  } | null;
}
type Ev = Record<string, unknown>;

describe('spectune tune on a two-host (rank0 + rank1) target', () => {
  let group: TwoRankGroup;
  let rank0: TestHost;
  let rank1: TestHost;
  let run: CliRun;
  let result: { status: string; best: TrialJson; trials: TrialJson[]; deployed: string };

  beforeAll(async () => {
    group = await startTwoRankGroup(UNIT, PORT, DIST_PORT);
    ({ rank0, rank1 } = group);
    const env = { SPECTUNE_ACTION_LOG: join(mkdtempSync(join(tmpdir(), 'spectune-actions-')), 'actions.jsonl') };
    run = await runCli(
      ['tune', '-c', group.config, '--json', '--confirm-probes', '--ssh-config', rank0.sshConfig],
      env,
    );
    expect(run.code, `spectune tune failed:\n${run.stderr.slice(-3000)}`).toBe(0);
    result = JSON.parse(run.stdout) as typeof result;
  });
  afterAll(() => stopTwoRankGroup(group, UNIT));

  // The events of one trial (from its start to its end).
  const trialEvents = (index: number): Ev[] => {
    const from = run.events.findIndex((e) => e.type === 'trial:start' && e.trial === index + 1);
    const to = run.events.findIndex((e, i) => i > from && e.type === 'trial:end');
    return run.events.slice(from, to + 1);
  };
  const actionsOn = (events: Ev[], action: string, host: TestHost) =>
    events.filter((e) => e.type === 'service:action' && e.action === action && String(e.host).includes(host.name));

  it('deploys every trial to both units, each with its own command line', () => {
    expect(result.status).toBe('done');
    // Search trials deploy; the soak re-measures the winner in force (no deploy).
    const deployed = result.trials.filter((t) => t.kind === 'search');
    expect(deployed.map((t) => t.config.speculative_num_steps)).toEqual(expect.arrayContaining([4, 10]));
    for (const t of deployed) {
      const ev = trialEvents(t.index);
      expect(actionsOn(ev, 'deploy', rank0).length, `trial ${t.index} on ${rank0.name}`).toBe(1);
      expect(actionsOn(ev, 'deploy', rank1).length, `trial ${t.index} on ${rank1.name}`).toBe(1);
    }
    for (const [h, rank] of [
      [rank0, 0],
      [rank1, 1],
    ] as const) {
      const texts = [...readDropInVersions(h, UNIT).values()];
      for (const steps of [4, 10]) {
        const text = texts.find((x) => x.includes(`--speculative-num-steps ${steps}`));
        expect(text, `${h.name}: a drop-in with steps ${steps}`).toBeDefined();
        expect(text).toContain(`--node-rank ${rank}`);
      }
    }
  });

  it('diagnoses the crashing config from both journals and rolls both units back', () => {
    const failed = result.trials.filter((t) => t.status === 'failed');
    expect(failed.map((t) => t.config.speculative_num_steps)).toEqual([10]);
    const v = failed[0].verdict!;
    expect(v.class === 'kv_cache_oom' || v.cause === 'kv_cache_oom', JSON.stringify(v)).toBe(true);
    expect(v.summary).toContain("over all ranks' journals");
    const ev = trialEvents(failed[0].index);
    const from = ev.find(
      (e) => e.type === 'log' && String(e.message).startsWith('diagnosing the failed group start from'),
    );
    expect(String(from?.message)).toContain(`journal:${rank0.name}:${UNIT}`);
    expect(String(from?.message)).toContain(`journal:${rank1.name}:${UNIT}`);
    const diag = ev.filter((e) => e.type === 'diagnosis');
    expect(diag).toHaveLength(1);
    expect(actionsOn(ev, 'rollback', rank0)).toHaveLength(1);
    expect(actionsOn(ev, 'rollback', rank1)).toHaveLength(1);
    const iRollback = ev.findIndex((e) => e.type === 'service:action' && e.action === 'rollback');
    expect(ev.slice(iRollback).some((e) => e.type === 'service:ready')).toBe(true);
  });

  it('leaves both units on the winner, running, and the endpoint healthy', async () => {
    const best = result.best.config.speculative_num_steps;
    expect(best).not.toBe(10);
    expect(readStepsInForce(rank0, UNIT)).toBe(best);
    expect(readStepsInForce(rank1, UNIT)).toBe(best);
    expect(unitActiveState(rank0, UNIT)).toBe('active');
    expect(unitActiveState(rank1, UNIT)).toBe('active');
    expect((await fetch(`http://${rank0.ip}:${PORT}/health`)).status).toBe(200);
    expect(result.deployed).toContain('# rank1');
    expect(result.deployed).toContain('--node-rank 1');
  });
});
