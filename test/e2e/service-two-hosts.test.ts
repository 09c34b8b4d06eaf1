// The service commands on a model split across two real systemd test hosts (rank0 on th1, the endpoint; rank1 on
// th2; the SIMULATED two-node SGLang): status, apply, rollback and logs act on the whole group, --rank 1 on one rank,
// and --dry-run changes nothing on either host (nor the local action log).
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestHost } from './helpers/testhosts.js';
import { readStepsInForce, runCli, sshRun } from './tune-support.js';
import {
  readDropInVersions,
  startTwoRankGroup,
  stopTwoRankGroup,
  unitActiveState,
  type TwoRankGroup,
} from './two-host-support.js';

const UNIT = 'spectune-group-e2e.service';
const PORT = 31721;
/** rank0's dist-init port; rank1 reaches it through the relay on this machine. */
const DIST_PORT = 31722;

// MainPID and restart count of the unit, read directly (not through spectune).
function pidOf(h: TestHost): string {
  return sshRun(h, `systemctl show -p MainPID -p NRestarts ${UNIT}`).trim();
}

// Whether a path exists on the test host.
function existsOn(h: TestHost, path: string): boolean {
  return sshRun(h, `test -e ${path} && echo yes || echo no`).trim() === 'yes';
}

describe('service commands on a two-host (rank0 + rank1) group', () => {
  let group: TwoRankGroup;
  let rank0: TestHost;
  let rank1: TestHost;
  let flags: string[];
  let env: Record<string, string>;

  // Poll `spectune status` on the group until it says every rank is up (exit 0).
  async function waitGroupUp(): Promise<void> {
    for (let i = 0; i < 120; i++) {
      if ((await runCli(['status', ...flags, '--json'], env)).code === 0) return;
      await new Promise((r) => setTimeout(r, 500));
    }
    throw new Error('the group did not come up');
  }

  beforeAll(async () => {
    group = await startTwoRankGroup(UNIT, PORT, DIST_PORT);
    ({ rank0, rank1 } = group);
    flags = ['-c', group.config, '--ssh-config', rank0.sshConfig];
    env = { SPECTUNE_ACTION_LOG: join(mkdtempSync(join(tmpdir(), 'spectune-group-actions-')), 'actions.jsonl') };
    await waitGroupUp();
  });
  afterAll(() => stopTwoRankGroup(group, UNIT));

  it('status shows every rank (rank0 healthy, rank1 active); --rank 1 shows the worker alone', async () => {
    const r = await runCli(['status', ...flags, '--json'], env);
    expect(r.code, r.stderr).toBe(0);
    const g = JSON.parse(r.stdout) as {
      healthy: boolean;
      ranks: { rank: number; host: string; unit: string; state: { activeState: string }; health: { ok: boolean } }[];
    };
    expect(g.healthy).toBe(true);
    expect(g.ranks.map((x) => [x.rank, x.host, x.unit, x.state.activeState])).toEqual([
      [0, rank0.name, UNIT, 'active'],
      [1, rank1.name, UNIT, 'active'],
    ]);
    expect(g.ranks[0].health.ok).toBe(true);
    const text = await runCli(['status', ...flags], env);
    expect(text.stdout).toMatch(new RegExp(`^rank0: ${rank0.name} ${UNIT}: active`, 'm'));
    expect(text.stdout).toMatch(new RegExp(`^rank1: ${rank1.name} ${UNIT}: active`, 'm'));
    expect(text.stdout).toContain('a worker rank serves no HTTP');
    const one = await runCli(['status', ...flags, '--rank', '1', '--json'], env);
    expect(one.code, one.stderr).toBe(0);
    expect((JSON.parse(one.stdout) as typeof g).ranks.map((x) => [x.rank, x.host])).toEqual([[1, rank1.name]]);
    const bad = await runCli(['status', ...flags, '--rank', '2'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--rank: expected 0..1');
  });

  it('apply --dry-run and rollback --dry-run plan every rank (or --rank 1 alone) and change nothing on either host', async () => {
    const before = [pidOf(rank0), pidOf(rank1)];
    const r = await runCli(['apply', ...flags, '--set', 'speculative_num_steps=4', '--dry-run'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`# rank0 ${rank0.name}`);
    expect(r.stdout).toContain(`# rank1 ${rank1.name}`);
    expect(r.stdout.match(/^\+--speculative-num-steps 4$/gm)).toHaveLength(2);
    const one = await runCli(['apply', ...flags, '--rank', '1', '--set', 'speculative_num_steps=4', '--dry-run'], env);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toContain('--node-rank 1');
    expect(one.stdout).not.toContain('--node-rank 0');
    const rb = await runCli(['rollback', ...flags, '--to', 'none', '--dry-run'], env);
    expect(rb.code, rb.stderr).toBe(0);
    expect(rb.stdout).toContain('nothing to roll back');
    for (const h of [rank0, rank1]) {
      expect(existsOn(h, `/etc/systemd/system/${UNIT}.d/90-spectune.conf`), h.name).toBe(false);
      expect(existsOn(h, `/var/lib/spectune/${UNIT}`), h.name).toBe(false);
    }
    expect([pidOf(rank0), pidOf(rank1)]).toEqual(before);
    expect(existsSync(env.SPECTUNE_ACTION_LOG)).toBe(false);
  });

  it('apply deploys to both ranks, restarts rank0 then rank1, is ready with the group, and marks both good', async () => {
    const r = await runCli(['apply', ...flags, '--set', 'speculative_num_steps=4', '--json'], env);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'ready', config: { speculative_num_steps: 4 } });
    for (const [h, rank] of [
      [rank0, 0],
      [rank1, 1],
    ] as const) {
      expect(readStepsInForce(h, UNIT), h.name).toBe(4);
      expect(readDropInVersions(h, UNIT).get(1)).toContain(`--node-rank ${rank}`);
      expect(sshRun(h, `cat /var/lib/spectune/${UNIT}/good`).trim()).toBe('1');
      expect(unitActiveState(h, UNIT)).toBe('active');
    }
    const restarts = readFileSync(env.SPECTUNE_ACTION_LOG, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { action: string; host: string })
      .filter((a) => a.action === 'restart')
      .map((a) => a.host);
    expect(restarts).toEqual([rank0.name, rank1.name]);
  });

  it("logs merges both ranks' journals in time order; --rank 1 reads the worker alone", async () => {
    const r = await runCli(['logs', ...flags, '--json'], env);
    expect(r.code, r.stderr).toBe(0);
    const entries = JSON.parse(r.stdout) as { rank: number; realtimeUs: number; message: string }[];
    expect(new Set(entries.map((e) => e.rank))).toEqual(new Set([0, 1]));
    expect(entries.map((e) => e.realtimeUs)).toEqual([...entries.map((e) => e.realtimeUs)].sort((a, b) => a - b));
    expect(entries.some((e) => e.rank === 0 && /fired up and ready to roll/.test(e.message))).toBe(true);
    const one = await runCli(['logs', ...flags, '--rank', '1', '--json'], env);
    expect(one.code, one.stderr).toBe(0);
    const worker = JSON.parse(one.stdout) as { hostname: string; message: string }[];
    expect(worker.length).toBeGreaterThan(0);
    expect(new Set(worker.map((e) => e.hostname))).toEqual(new Set([rank1.name]));
    expect(worker.some((e) => /fired up and ready to roll/.test(e.message))).toBe(false);
    const text = await runCli(['logs', ...flags], env);
    expect(text.stdout).toMatch(new RegExp(` ${rank0.name} `));
    expect(text.stdout).toMatch(new RegExp(` ${rank1.name} `));
  });

  it('a crashing config is diagnosed from both journals in one verdict and both ranks are rolled back', async () => {
    const r = await runCli(['apply', ...flags, '--set', 'speculative_num_steps=10', '--json'], env);
    expect(r.code, r.stderr.slice(-3000)).toBe(1);
    const out = JSON.parse(r.stdout) as {
      status: string;
      verdict: { class: string; cause: string | null; summary: string };
    };
    expect(out.status).toBe('rolled_back');
    expect(
      out.verdict.class === 'kv_cache_oom' || out.verdict.cause === 'kv_cache_oom',
      JSON.stringify(out.verdict),
    ).toBe(true);
    expect(out.verdict.summary).toContain("over all ranks' journals");
    expect(r.stderr).toContain(`journal:${rank0.name}:${UNIT}`);
    expect(r.stderr).toContain(`journal:${rank1.name}:${UNIT}`);
    for (const h of [rank0, rank1]) {
      expect(readStepsInForce(h, UNIT), h.name).toBe(4);
      expect(unitActiveState(h, UNIT), h.name).toBe('active');
    }
  });

  it("rollback --to none returns both ranks to the operator's units and both serve again", async () => {
    const r = await runCli(['rollback', ...flags, '--to', 'none', '--json'], env);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'rolled_back', config: { speculative_num_steps: 3 } });
    for (const h of [rank0, rank1]) {
      expect(existsOn(h, `/etc/systemd/system/${UNIT}.d/90-spectune.conf`), h.name).toBe(false);
      expect(readStepsInForce(h, UNIT), h.name).toBe(3);
    }
    await waitGroupUp();
  });
});
