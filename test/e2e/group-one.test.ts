// One model on two hosts, safe as one (issue 25, parts 1, 2 and 4), on real systemd test hosts: rank 0 on th1 (the
// endpoint), rank 1 on th2, the SIMULATED two-node SGLang launched with SGLang's documented two-node flags. init
// finds both ranks; doctor FAILs a config that lists one; an apply without --rank on it is refused and changes
// nothing; apply and rollback change both ranks with one version number (byte-equal drop-ins but for each rank's
// own --node-rank and --dist-init-addr); status warns when the ranks differ; an operator's 95-operator.conf on rank
// 1 that overrides spectune's is shown by status, doctor and plans, and rollback refuses it, naming the file.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTestHosts, type TestHost } from './helpers/testhosts.js';
import { PROFILE, TIME_SCALE, readStepsInForce, removeSimUnit, runCli, sshRun } from './tune-support.js';
import { installRankUnit, readDropInVersions, startDistRelay, unitActiveState } from './two-host-support.js';

const UNIT = 'spectune-group-one-e2e.service';
const PORT = 31761;
/** rank0's dist-init port; rank1 reaches it through the relay on this machine (the test hosts reach only it). */
const DIST_PORT = 31762;
const DROPIN = `/etc/systemd/system/${UNIT}.d/90-spectune.conf`;
const OPERATOR = `/etc/systemd/system/${UNIT}.d/95-operator.conf`;

// One rank's unit: SGLang's two-node launch line (docs.sglang.io "Multi-Node Deployment": --tp, --dist-init-addr,
// --nnodes 2, --node-rank N) with the simulator as the engine binary.
function rankUnit(rank: number, distAddr: string): string {
  return [
    '[Unit]',
    `Description=${UNIT}: SIMULATED SGLang rank ${rank} of 2 (spectune sim), issue 25 e2e`,
    '',
    '[Service]',
    `ExecStart=/usr/local/bin/node /opt/spectune/bin/spectune.js sim --sim-profile ${PROFILE} --sim-time-scale ${TIME_SCALE} --model-path Qwen/Qwen3.5-122B-A10B-FP8 --tp 2 --dist-init-addr ${distAddr} --nnodes 2 --node-rank ${rank} --host 0.0.0.0 --port ${PORT} --speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1`,
    'Restart=always',
    'RestartSec=1',
    'TimeoutStopSec=20',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}

// MainPID and restart count, read directly (not through spectune).
function pidOf(h: TestHost): string {
  return sshRun(h, `systemctl show -p MainPID -p NRestarts ${UNIT}`).trim();
}

// Whether a path exists on the host.
function existsOn(h: TestHost, path: string): boolean {
  return sshRun(h, `test -e ${path} && echo yes || echo no`).trim() === 'yes';
}

// A drop-in with each rank's own flags blanked: what must be byte-equal between the ranks.
function withoutRankFlags(text: string): string {
  return text.replace(/--node-rank \d+/g, '--node-rank N').replace(/--dist-init-addr \S+/g, '--dist-init-addr ADDR');
}

describe('a two-node SGLang group (rank0 th1, rank1 th2): init, doctor, apply, status, rollback as one', () => {
  let rank0: TestHost;
  let rank1: TestHost;
  let relay: Server;
  let dir: string;
  let full: string;
  let partial: string;
  let ssh: string[];
  let env: Record<string, string>;

  // Poll `spectune status` on the whole group until every rank is up (exit 0).
  async function waitGroupUp(): Promise<void> {
    for (let i = 0; i < 120; i++) {
      if ((await runCli(['status', '-c', full, ...ssh, '--json'], env)).code === 0) return;
      await new Promise((r) => setTimeout(r, 500));
    }
    throw new Error('the group did not come up');
  }

  // Both ranks: the same config in force (steps), byte-equal drop-ins but for their own rank flags, the same
  // current version, both active; and status says healthy with no difference.
  async function expectSameConfig(steps: number, version: string): Promise<void> {
    const drops = [rank0, rank1].map((h) => (existsOn(h, DROPIN) ? sshRun(h, `cat ${DROPIN}`) : null));
    expect(drops[0] === null ? null : withoutRankFlags(drops[0])).toBe(
      drops[1] === null ? null : withoutRankFlags(drops[1]),
    );
    for (const h of [rank0, rank1]) {
      expect(readStepsInForce(h, UNIT), h.name).toBe(steps);
      expect(sshRun(h, `cat /var/lib/spectune/${UNIT}/current`).trim(), h.name).toBe(version);
      expect(unitActiveState(h, UNIT), h.name).toBe('active');
    }
    await waitGroupUp();
    const st = await runCli(['status', '-c', full, ...ssh, '--json'], env);
    expect(JSON.parse(st.stdout)).toMatchObject({ healthy: true, differences: [], incomplete: null });
  }

  beforeAll(async () => {
    const hosts = loadTestHosts();
    rank0 = hosts.find((h) => h.name === 'th1')!;
    rank1 = hosts.find((h) => h.name === 'th2')!;
    relay = await startDistRelay(rank1.hostIp, rank0.ip, DIST_PORT);
    installRankUnit(rank0, UNIT, rankUnit(0, `${rank0.ip}:${DIST_PORT}`));
    installRankUnit(rank1, UNIT, rankUnit(1, `${rank1.hostIp}:${DIST_PORT}`));
    sshRun(rank0, `systemctl start ${UNIT}`);
    sshRun(rank1, `systemctl start ${UNIT}`);
    dir = mkdtempSync(join(tmpdir(), 'spectune-group-one-'));
    full = join(dir, 'spectune.yaml');
    partial = join(dir, 'rank0-only.yaml');
    ssh = ['--ssh-config', rank0.sshConfig];
    env = { SPECTUNE_ACTION_LOG: join(dir, 'actions.jsonl') };
    // Wait until rank0 serves (the group is up) before init measures it.
    for (
      let i = 0;
      i < 120 &&
      !(
        sshRun(
          rank0,
          `journalctl -u ${UNIT} --no-pager -o cat | grep -c 'fired up and ready to roll' || true`,
        ).trim() !== '0'
      );
      i++
    )
      await new Promise((r) => setTimeout(r, 500));
  });
  afterAll(async () => {
    if (rank0) removeSimUnit(rank0, UNIT);
    if (rank1) removeSimUnit(rank1, UNIT);
    if (relay) await new Promise((r) => relay.close(r));
  });

  it("init with only rank 0's host writes nothing and says in one line to pass --host per rank", async () => {
    const out = join(dir, 'not-written.yaml');
    const r = await runCli(['init', '--host', rank0.name, '--unit', UNIT, ...ssh, '--out', out], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `spectune: ${rank0.name} ${UNIT} is rank 0 of 2 nodes (--nnodes 2 --node-rank 0 --dist-init-addr ${rank0.ip}:${DIST_PORT}): rank 1 not found`,
    );
    expect(r.stderr).toContain(
      `pass --host once per rank, e.g. spectune init --host ${rank0.name} --host HOST_OF_RANK1`,
    );
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(out)).toBe(false);
  });

  it('init with both hosts (rank 1 first) writes both ranks under hosts:, rank0 first, and doctor passes the group', async () => {
    const r = await runCli(
      ['init', '--host', rank1.name, '--host', rank0.name, '--unit', UNIT, ...ssh, '--out', full],
      env,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`on 2 ranks (rank0 ${rank0.name}, rank1 ${rank1.name})`);
    const doc = parseYaml(readFileSync(full, 'utf8')) as { target: { hosts: unknown[]; endpoint: string } };
    expect(doc.target.hosts).toEqual([
      { host: rank0.name, unit: UNIT, role: 'rank0' },
      { host: rank1.name, unit: UNIT, role: 'rank1' },
    ]);
    expect(doc.target.endpoint).toBe(`http://${rank0.ip}:${PORT}`);
    // The same config with rank 1 left out: what init wrote before this change (rank 0 only).
    const one = parseYaml(readFileSync(full, 'utf8')) as { target: { hosts: unknown[] } };
    one.target.hosts = one.target.hosts.slice(0, 1);
    writeFileSync(partial, stringifyYaml(one));
    expect((parseYaml(readFileSync(partial, 'utf8')) as { target: { hosts: unknown[] } }).target.hosts).toHaveLength(1);
    const d = await runCli(['doctor', '-c', full, ...ssh, '--json'], env);
    const checks = JSON.parse(d.stdout) as { checks: { id: string; status: string; summary: string }[] };
    expect(checks.checks.find((c) => c.id === 'group')).toMatchObject({ status: 'PASS' });
  });

  it('a config listing rank 0 alone: doctor FAILs, status warns, apply without --rank is refused and changes nothing', async () => {
    const d = await runCli(['doctor', '-c', partial, ...ssh], env);
    expect(d.code).toBe(1);
    expect(d.stdout).toMatch(/FAIL\s+group .*is rank 0 of a 2-node group .* lists 1 of its 2 ranks/);
    const st = await runCli(['status', '-c', partial, ...ssh], env);
    expect(st.stdout).toContain(
      `warning: the target lists only rank 0 (${rank0.name} ${UNIT}) of a 2-node group (rank 1 missing)`,
    );
    const before = [pidOf(rank0), pidOf(rank1)];
    for (const extra of [[], ['--dry-run']]) {
      const r = await runCli(['apply', '-c', partial, ...ssh, '--set', 'speculative_num_steps=4', ...extra], env);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toBe(
        `spectune: apply would change only rank 0 (${rank0.name} ${UNIT}) of a 2-node group: rank 1 keeps its config, so the ranks will differ: refused, nothing was changed (hint: list every rank under target.hosts (\`spectune init --host HOST0 --host HOST1\` writes them), or pass --rank 0 to change this rank alone on purpose)\n`,
      );
    }
    const rb = await runCli(['rollback', '-c', partial, ...ssh, '--to', 'none'], env);
    expect(rb.code).toBe(2);
    expect(rb.stderr).toContain('rollback would change only rank 0');
    // --rank 0 asks for it: the dry run plans rank 0 and says plainly that the ranks will differ.
    const one = await runCli(
      ['apply', '-c', partial, ...ssh, '--rank', '0', '--set', 'speculative_num_steps=4', '--dry-run'],
      env,
    );
    expect(one.code, one.stderr).toBe(0);
    expect(one.stderr).toContain('--rank 0: apply changes only rank 0');
    expect(one.stderr).toContain('the ranks will differ');
    for (const h of [rank0, rank1]) {
      expect(existsOn(h, `/etc/systemd/system/${UNIT}.d`), h.name).toBe(false);
      expect(existsOn(h, `/var/lib/spectune/${UNIT}`), h.name).toBe(false);
    }
    expect([pidOf(rank0), pidOf(rank1)]).toEqual(before);
    expect(existsSync(env.SPECTUNE_ACTION_LOG)).toBe(false);
  });

  it('apply changes both ranks with one version number and the same config; the plan lists every file in force', async () => {
    const plan = await runCli(['apply', '-c', full, ...ssh, '--set', 'speculative_num_steps=4', '--dry-run'], env);
    expect(plan.code, plan.stderr).toBe(0);
    expect(
      plan.stdout.match(
        /^files in force now \(systemd order\):\n {2}1\. \/etc\/systemd\/system\/spectune-group-one-e2e\.service {2}\[unit file\]$/gm,
      ),
    ).toHaveLength(2);
    const r = await runCli(['apply', '-c', full, ...ssh, '--set', 'speculative_num_steps=4', '--json'], env);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'ready', config: { speculative_num_steps: 4 } });
    expect(readDropInVersions(rank0, UNIT).get(1)).toContain('--node-rank 0');
    expect(readDropInVersions(rank1, UNIT).get(1)).toContain('--node-rank 1');
    await expectSameConfig(4, '1');
  });

  it('a change to rank 1 alone (--rank 1) warns that the ranks differ, status names the differences, and the next group apply puts one version on both', async () => {
    const r = await runCli(['apply', '-c', full, ...ssh, '--rank', '1', '--set', 'speculative_num_steps=5'], env);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    expect(r.stderr).toContain(
      `--rank 1: apply changes only rank 1 (${rank1.name} ${UNIT}) of a 2-node group: the ranks will differ`,
    );
    const st = await runCli(['status', '-c', full, ...ssh], env);
    expect(st.stdout).toContain(
      'warning: the ranks run different configs: drop-in version differs: rank0 1, rank1 2; speculative_num_steps differs: rank0 4, rank1 5',
    );
    const json = JSON.parse((await runCli(['status', '-c', full, ...ssh, '--json'], env)).stdout) as {
      differences: string[];
    };
    expect(json.differences).toEqual([
      'drop-in version differs: rank0 1, rank1 2',
      'speculative_num_steps differs: rank0 4, rank1 5',
    ]);
    // rank0 kept 1, rank1 kept 1-2: the group's change is version 3 on both (rank0 already ran steps 4: rewritten as 3).
    const back = await runCli(['apply', '-c', full, ...ssh, '--set', 'speculative_num_steps=4'], env);
    expect(back.code, back.stderr.slice(-3000)).toBe(0);
    expect([...readDropInVersions(rank0, UNIT).keys()].sort()).toEqual([1, 3]);
    await expectSameConfig(4, '3');
  });

  it("an operator's 95-operator.conf on rank 1 that overrides spectune's is shown by status, doctor and plans; rollback refuses it and names the file", async () => {
    sshRun(
      rank1,
      `cat > ${OPERATOR} && systemctl daemon-reload`,
      `[Service]\nExecStart=\nExecStart=${rankUnit(1, `${rank1.hostIp}:${DIST_PORT}`)
        .match(/^ExecStart=(.*)$/m)![1]
        .replace('--speculative-num-steps 3', '--speculative-num-steps 10')}\n`,
    );
    try {
      const before = [pidOf(rank0), pidOf(rank1)];
      const st = await runCli(['status', '-c', full, ...ssh], env);
      expect(st.stdout).toMatch(
        new RegExp(
          `^rank1: ${rank1.name} ${UNIT}: [^\\n]*\\n {2}drop-in: spectune's \\(version 3, known-good 3\\), OVERRIDDEN by ${OPERATOR}`,
          'm',
        ),
      );
      expect(st.stdout).toContain(`3. ${OPERATOR}  [drop-in (not spectune's)]`);
      expect(st.stdout).toContain(`warning: ${OPERATOR} (after spectune's drop-in) overrides ExecStart`);
      expect(st.stdout).toContain('speculative_num_steps differs: rank0 4, rank1 10');
      const d = await runCli(['doctor', '-c', full, ...ssh], env);
      expect(d.stdout).toMatch(
        new RegExp(
          `WARN\\s+in-force\\s+${rank1.name} ${UNIT}: ${OPERATOR} comes after spectune's drop-in and overrides ExecStart`,
        ),
      );
      const plan = await runCli(['apply', '-c', full, ...ssh, '--set', 'speculative_num_steps=5', '--dry-run'], env);
      expect(plan.code).toBe(1);
      expect(plan.stderr).toContain(
        `rank1 ${rank1.name}: ${OPERATOR} sets ExecStart= after spectune's drop-in and would override it`,
      );
      for (const extra of [['--dry-run'], []]) {
        const rb = await runCli(['rollback', '-c', full, ...ssh, '--to', 'none', ...extra], env);
        expect(rb.code, rb.stderr).toBe(1);
        expect(rb.stderr).toContain(
          `rank1 ${rank1.name}: ${OPERATOR} comes after spectune's drop-in and overrides ExecStart`,
        );
        expect(rb.stderr).toContain(`move ${OPERATOR} out of the way`);
      }
      expect([pidOf(rank0), pidOf(rank1)]).toEqual(before);
    } finally {
      sshRun(rank1, `rm -f ${OPERATOR} && systemctl daemon-reload`);
    }
  });

  it('rollback --to none returns both ranks to their own units, and both serve again', async () => {
    const r = await runCli(['rollback', '-c', full, ...ssh, '--to', 'none', '--json'], env);
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ status: 'rolled_back', config: { speculative_num_steps: 3 } });
    for (const h of [rank0, rank1]) expect(existsOn(h, DROPIN), h.name).toBe(false);
    await expectSameConfig(3, 'none');
  });
});
