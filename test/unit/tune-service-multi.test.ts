// The multi-host service port (tune-service-multi.ts) on two scripted systemd hosts: deploy to both ranks, restart
// rank0 then rank1, fail fast on either rank, diagnose from both journals, roll both back, mark both good.
import { describe, expect, it } from 'vitest';
import type { Verdict } from '../../src/diagnose/types.js';
import type { SpectuneEvent } from '../../src/tune/events.js';
import {
  createMultiHostServicePort,
  mergeGroupVerdict,
  withoutRankDiagnoses,
} from '../../src/app/tune-service-multi.js';
import { orderRanks } from '../../src/config/index.js';
import { describeRankDifferences, pickGroupVersion, type FailedStart } from '../../src/service/index.js';
import { renderDropIn } from '../../src/service/unit.js';
import { DROPIN, EXEC, UNIT } from './service-fakes.js';
import { abortsOnNccl, comesUp, createRanks, diesOfOom, later } from './tune-multi-fakes.js';

// The port over two fake ranks.
function setup() {
  const events: SpectuneEvent[] = [];
  const { ranks, actionLog, restarts } = createRanks(events);
  const port = createMultiHostServicePort({
    ranks: ranks.map((r) => r.ctl),
    endpoint: 'http://10.0.0.2:30000',
    engine: 'sglang',
    onEvent: (e) => events.push(e),
    actionLog,
    echoWindowMs: 300,
  });
  return { events, ranks, actionLog, restarts, port };
}

const VERDICT = (cls: Verdict['class'], summary: string): Verdict => ({
  class: cls,
  cause: null,
  confidence: 'high',
  summary,
  evidence: [],
  ruledOut: [],
  remediation: [],
  crashed: true,
});

describe('multi-host service port', () => {
  it('writes the drop-in on both hosts, restarts rank0 then rank1, is ready with rank0, and marks both good', async () => {
    const { ranks, restarts, port, actionLog } = setup();
    const out = await port.deploy({ speculative_num_steps: 4 }, 'trial 1');
    expect(out).toMatchObject({ ready: true, restarts: 1 });
    for (const r of ranks) expect(r.sd.host.files.get(DROPIN)).toContain('--speculative-num-steps 4');
    expect(restarts).toEqual(['root@th-a', 'root@th-b']);
    expect(actionLog.records.map((a) => `${a.action}@${a.host}`)).toEqual([
      'deploy@root@th-a',
      'restart@root@th-a',
      'deploy@root@th-b',
      'restart@root@th-b',
    ]);
    await port.markGood();
    for (const r of ranks) expect(r.sd.host.files.get(`/var/lib/spectune/${UNIT}/good`)).toBe('1\n');
    expect(await port.readConfig(['speculative_num_steps'])).toEqual({ speculative_num_steps: 4 });
  });

  it("attributes rank1's NCCL watchdog abort to rank0's OOM, from both journals, and stops both", async () => {
    const { ranks, port, events } = setup();
    ranks[0].onStart = diesOfOom(30);
    ranks[1].onStart = abortsOnNccl(120);
    const out = await port.deploy({ speculative_num_steps: 10 }, 'trial 2');
    expect(out.ready).toBe(false);
    if (out.ready) return;
    expect(out.verdict?.class).toBe('cuda_oom');
    expect(out.verdict?.evidence[0]).toMatchObject({ source: `journal:root@th-a:${UNIT}` });
    expect(out.verdict?.summary).toContain("over all ranks' journals");
    expect(out.reason).toContain('root@th-a');
    const from = events.find((e) => e.type === 'log' && e.message.startsWith('diagnosing the failed group start'));
    expect(from && 'message' in from ? from.message : '').toContain(`journal:root@th-b:${UNIT}`);
    for (const r of ranks) expect(r.sd.state.active).not.toBe('active');
  });

  it('fails fast when the worker fails while rank0 waits for it, and stops rank0', async () => {
    const { ranks, port } = setup();
    ranks[0].onStart = () => {};
    ranks[1].onStart = diesOfOom(30);
    const t0 = Date.now();
    const out = await port.deploy({ speculative_num_steps: 10 }, 'trial 3');
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(out).toMatchObject({ ready: false });
    if (out.ready) return;
    expect(out.reason).toContain('root@th-b');
    expect(ranks[0].sd.host.execs()).toContainEqual(['systemctl', 'stop', UNIT]);
    expect(ranks[0].sd.state.active).toBe('inactive');
  });

  it('rolls both ranks back to their known-good version and is done when rank0 is ready', async () => {
    const { ranks, port, actionLog } = setup();
    for (const r of ranks) {
      r.sd.host.files.set(DROPIN, `[Service]\nExecStart=\nExecStart=${EXEC.replace('steps 3', 'steps 10')}\n`);
      r.sd.host.files.set(`/var/lib/spectune/${UNIT}/good`, 'none\n');
      r.sd.host.files.set(`/var/lib/spectune/${UNIT}/current`, '2\n');
      r.sd.state = { active: 'failed', sub: 'failed', pid: 0, restarts: 0, result: 'signal' };
    }
    ranks[0].onStart = comesUp(0);
    ranks[1].onStart = comesUp(1);
    await port.recover('trial 2 failed');
    for (const r of ranks) expect(r.sd.host.files.has(DROPIN)).toBe(false);
    const rollbacks = actionLog.records
      .filter((a) => a.action === 'rollback')
      .map((a) => a.host)
      .sort();
    expect(rollbacks).toEqual(['root@th-a', 'root@th-b']);
    expect(await port.readConfig(['speculative_num_steps'])).toEqual({ speculative_num_steps: 3 });
  });

  it('waits for a worker still starting after rank0 is ready, and fails the rollback when it fails instead', async () => {
    for (const worker of ['slow', 'fails'] as const) {
      const { ranks, port } = setup();
      for (const r of ranks) r.sd.state = { active: 'failed', sub: 'failed', pid: 0, restarts: 0, result: 'signal' };
      ranks[0].onStart = comesUp(0);
      ranks[1].onStart =
        worker === 'slow'
          ? (sd, pid) =>
              later(600, () => {
                sd.state = { active: 'active', sub: 'running', pid, restarts: 0 };
              })
          : diesOfOom(600);
      const out = await port.recover('trial 2 failed').then(
        () => 'recovered',
        (e: Error) => e.message,
      );
      if (worker === 'slow') expect(out).toBe('recovered');
      else expect(out).toContain('root@th-b sim-e2e.service is failed/failed');
    }
  });

  it('writes one version number on every rank (the largest next one), even when their histories differ', async () => {
    const { ranks, port } = setup();
    // rank0 kept versions 1-5, rank1 1-3 (it missed two changes): the next change is version 6 on both.
    for (const [i, r] of ranks.entries()) {
      for (let v = 1; v <= (i === 0 ? 5 : 3); v++)
        r.sd.host.files.set(`/var/lib/spectune/${UNIT}/dropins/${v}.conf`, `[Service]\n# v${v}\n`);
      r.sd.host.files.set(`/var/lib/spectune/${UNIT}/good`, 'none\n');
      r.sd.host.files.set(`/var/lib/spectune/${UNIT}/current`, 'none\n');
    }
    const out = await port.deploy({ speculative_num_steps: 4 }, 'trial 1');
    expect(out).toMatchObject({ ready: true });
    for (const r of ranks) {
      expect(r.sd.host.files.get(`/var/lib/spectune/${UNIT}/current`)).toBe('6\n');
      expect(r.sd.host.files.get(`/var/lib/spectune/${UNIT}/dropins/6.conf`)).toContain('--speculative-num-steps 4');
    }
    expect(ranks[1].sd.host.files.has(`/var/lib/spectune/${UNIT}/dropins/4.conf`)).toBe(false);
  });

  it('writes the group version on a rank whose drop-in already says the config too (no per-rank drift)', async () => {
    const { ranks, port } = setup();
    const steps4 = renderDropIn({
      execStart: EXEC.replace('steps 3', 'steps 4'),
      environment: {},
      timeoutStopSec: null,
    });
    // rank1 already runs steps 4 as its version 3 (changed alone before); rank0 has no history.
    for (let v = 1; v <= 3; v++)
      ranks[1].sd.host.files.set(
        `/var/lib/spectune/${UNIT}/dropins/${v}.conf`,
        v === 3 ? steps4 : `[Service]\n# v${v}\n`,
      );
    ranks[1].sd.host.files.set(DROPIN, steps4);
    ranks[1].sd.host.files.set(`/var/lib/spectune/${UNIT}/good`, '3\n');
    ranks[1].sd.host.files.set(`/var/lib/spectune/${UNIT}/current`, '3\n');
    const out = await port.deploy({ speculative_num_steps: 4 }, 'trial 1');
    expect(out).toMatchObject({ ready: true });
    for (const r of ranks) {
      expect(r.sd.host.files.get(`/var/lib/spectune/${UNIT}/current`)).toBe('4\n');
      expect(r.sd.host.files.get(DROPIN)).toBe(steps4);
    }
  });

  it("refuses to roll the group back when rank1 has a later drop-in that overrides spectune's, naming it, and stops no rank", async () => {
    const { ranks, port } = setup();
    for (const r of ranks) {
      r.sd.host.files.set(DROPIN, `[Service]\nExecStart=\nExecStart=${EXEC.replace('steps 3', 'steps 4')}\n`);
      r.sd.host.files.set(`/var/lib/spectune/${UNIT}/good`, 'none\n');
      r.sd.host.files.set(`/var/lib/spectune/${UNIT}/current`, '1\n');
    }
    const operator = `/etc/systemd/system/${UNIT}.d/95-operator.conf`;
    ranks[1].sd.foreign = [
      { path: operator, text: `[Service]\nExecStart=\nExecStart=${EXEC.replace('steps 3', 'steps 10')}\n` },
    ];
    const err = await port.recover('trial failed').then(
      () => null,
      (e: Error & { code?: string; hint?: string }) => e,
    );
    expect(err?.code).toBe('E_FOREIGN_OVERRIDE');
    expect(err?.message).toContain(`rank1 root@th-b: ${operator} comes after spectune's drop-in`);
    expect(err?.hint).toContain(`move ${operator}`);
    for (const r of ranks) {
      expect(r.sd.host.execs()).not.toContainEqual(['systemctl', 'stop', UNIT]);
      expect(r.sd.state.active).toBe('active');
    }
  });

  it('describes what is deployed on every rank', async () => {
    const { port } = setup();
    const text = await port.describeDeployed();
    expect(text).toContain('# rank0');
    expect(text).toContain('# rank1');
    expect(text).toContain('root@th-b');
  });

  it("reads the end state of every rank for the report, rank0 first, with each unit's own ExecStart", async () => {
    const { port } = setup();
    const end = await port.readEndState!(['speculative_num_steps']);
    expect(end.settings).toEqual({ speculative_num_steps: 3 });
    expect(end.units.map((u) => u.host)).toEqual(['root@th-a', 'root@th-b']);
    for (const u of end.units)
      expect(u).toMatchObject({ unit: UNIT, dropIn: null, execStart: u.operatorExecStart, dropInPath: DROPIN });
    expect(end.units[0].operatorExecStart).toContain('--speculative-num-steps 3');
  });
});

describe('multi-host helpers', () => {
  it('orders hosts rank0 first and keeps unranked hosts in order', () => {
    type Host = { unit: string; role?: 'rank0' | 'rank1' };
    expect(
      orderRanks<Host>([
        { unit: 'b', role: 'rank1' },
        { unit: 'a', role: 'rank0' },
      ]).map((h) => h.unit),
    ).toEqual(['a', 'b']);
    expect(orderRanks<Host>([{ unit: 'x' }, { unit: 'y' }]).map((h) => h.unit)).toEqual(['x', 'y']);
  });

  it("keeps the failed rank's crash loop in the group verdict, and falls back to it when the group names no failure", () => {
    const failed = {
      status: 'failed',
      reason: 'r',
      looping: true,
      verdict: { ...VERDICT('crash_loop', 'loop'), cause: 'kv_cache_oom' },
      diagnosis: null,
      timeToVerdictMs: null,
      journal: '',
    } as FailedStart;
    const merged = mergeGroupVerdict(VERDICT('kv_cache_oom', 'no room'), failed, 'th1 u');
    expect(merged).toMatchObject({ class: 'crash_loop', cause: 'kv_cache_oom' });
    expect(merged.summary).toContain('th1 u failed first');
    expect(mergeGroupVerdict({ ...VERDICT('unknown', '?'), crashed: false }, failed, 'th1 u')).toBe(failed.verdict);
    expect(mergeGroupVerdict(null, failed, 'th1 u')).toBe(failed.verdict);
  });

  it('picks the largest next version for the group, none when no rank changes', () => {
    expect(pickGroupVersion([6, 4])).toBe(6);
    expect(pickGroupVersion([0, 3])).toBe(3);
    expect(pickGroupVersion([0, 0])).toBeUndefined();
  });

  it('names every difference between the ranks (version and settings), not their own host and port', () => {
    const same = { speculative_num_steps: 4, port: 30000 };
    expect(
      describeRankDifferences([
        { rank: 0, version: 6, settings: same },
        { rank: 1, version: 6, settings: { ...same, port: 30001 } },
      ]),
    ).toEqual([]);
    expect(
      describeRankDifferences([
        { rank: 0, version: 15, settings: same },
        { rank: 1, version: 14, settings: { speculative_num_steps: 5 } },
      ]),
    ).toEqual(['drop-in version differs: rank0 15, rank1 14', 'speculative_num_steps differs: rank0 4, rank1 5']);
    expect(describeRankDifferences([{ rank: 0, version: 1, settings: same }])).toEqual([]);
  });

  it('drops per-rank diagnosis events only', () => {
    const seen: SpectuneEvent[] = [];
    const sink = withoutRankDiagnoses((e) => seen.push(e));
    sink({ type: 'diagnosis', ts: 1, verdict: VERDICT('unknown', '?') });
    sink({ type: 'log', ts: 1, level: 'info', message: 'm' });
    expect(seen.map((e) => e.type)).toEqual(['log']);
  });
});
