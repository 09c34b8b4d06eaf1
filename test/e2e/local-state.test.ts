// spectune as a non-root local user whose ssh config reaches a real systemd test host as root, with the old shared
// /var/lib/spectune on this machine unwritable for it: apply, rollback and tune work with the user's own state
// (~/.local/state/spectune, the campaign's log next to its store); pointed at a path it cannot write, each fails
// before touching the host, in one line, the host byte for byte unchanged. And an action log that fails mid-run
// (/dev/full: ENOSPC on the first record) puts the candidate back before any restart.
import { existsSync, mkdirSync, readFileSync, rmdirSync, statSync, writeFileSync, chownSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitHealthy } from './helpers/health.js';
import { ensureNonRootUser, giveSshConfig, runCliAs, type LocalUser, type UserRun } from './helpers/nonroot.js';
import { loadTestHosts, type TestHost } from './helpers/testhosts.js';
import { installSimUnit, readStepsInForce, removeSimUnit, runCli, sshRun, START_STEPS } from './tune-support.js';

const UNIT = 'spectune-localstate-e2e.service';
const PORT = 31801;
const SHARED = '/var/lib/spectune';

let h: TestHost;
let user: LocalUser;
let sshConfig = '';
let flags: string[] = [];
let createdShared = false;

// Everything of the unit on the host that a command could change: the files systemd reads, spectune's state and
// lease, the running process and whether a daemon-reload is pending.
function hostState(): string {
  return sshRun(
    h,
    [
      `systemctl cat ${UNIT} 2>&1`,
      `for d in /etc/systemd/system/${UNIT}.d /run/systemd/system/${UNIT}.d /var/lib/spectune/${UNIT} /run/spectune/${UNIT}; do echo "== $d"; find "$d" -type f 2>/dev/null | sort | xargs -r sha256sum; done`,
      `systemctl show -p MainPID -p NRestarts -p NeedDaemonReload -p ActiveState ${UNIT}`,
      `systemctl list-units --all --no-legend 'spectune-lease-*' | grep -c localstate || true`,
    ].join('; '),
  );
}

// One line on stderr, exit 1 (not 70), no stack.
function expectOneLine(r: UserRun, re: RegExp): void {
  expect(r.code, r.stderr).toBe(1);
  expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
  expect(r.stderr).toMatch(re);
  expect(r.stderr).not.toMatch(/internal error|This is a bug|\n\s+at /);
}

// A small campaign config in the user's home (store next to it, as `spectune init` writes it).
function writeConfig(dir: string, trials: number): string {
  mkdirSync(dir, { recursive: true });
  const config = join(dir, 'spectune.yaml');
  writeFileSync(
    config,
    [
      'target:',
      '  engine: sglang',
      `  endpoint: http://${h.ip}:${PORT}`,
      '  manager: systemd',
      '  hosts:',
      `    - host: ${h.name}`,
      `      unit: ${UNIT}`,
      'space:',
      '  speculative_num_steps: { min: 2, max: 5 }',
      'search: { strategy: adaptive, noiseMargin: 4%, repeats: 1, soak: { repeats: 1 } }',
      'objective: { metric: decodeTokensPerSec.mean, concurrency: 1 }',
      'benchmark: { concurrency: [1], requests: 3, inputTokens: 64, outputTokens: 64, warmup: 1, timeouts: { ready: 120s, firstToken: 30s, stall: 10s, total: 60s } }',
      `budget: { trials: ${trials}, hours: 1h }`,
      'store: ./tune.db',
      '',
    ].join('\n'),
  );
  for (const p of [dir, config]) chownSync(p, user.uid, user.gid);
  return config;
}

beforeAll(async () => {
  h = loadTestHosts().find((x) => x.name === 'th3') ?? loadTestHosts()[0];
  user = ensureNonRootUser();
  sshConfig = giveSshConfig(user, h.sshConfig);
  flags = ['--host', h.name, '--ssh-config', sshConfig, '--unit', UNIT, '--endpoint', `http://${h.ip}:${PORT}`];
  // The old shared log's directory, root's and 0755, as a package or an earlier root run leaves it.
  if (!existsSync(SHARED)) {
    mkdirSync(SHARED, { mode: 0o755 });
    createdShared = true;
  }
  expect(statSync(SHARED).uid).toBe(0);
  installSimUnit(h, UNIT, PORT);
  await waitHealthy(`http://${h.ip}:${PORT}`, 60_000);
}, 180_000);
afterAll(() => {
  if (h) removeSimUnit(h, UNIT);
  if (createdShared)
    try {
      rmdirSync(SHARED);
    } catch {
      /* someone wrote there meanwhile */
    }
});

describe('non-root local user, /var/lib/spectune unwritable', () => {
  it('pointed at the shared log, apply, rollback and tune fail before touching the host, in one line', async () => {
    const before = hostState();
    const env = { SPECTUNE_ACTION_LOG: `${SHARED}/actions.jsonl` };
    const line = new RegExp(
      `^spectune: action log ${SHARED}/actions.jsonl: cannot write it( \\(at ${SHARED}\\))?: permission denied \\(EACCES\\); nothing was changed on any host \\(hint: pass --action-log PATH`,
    );
    expectOneLine(await runCliAs(user, ['apply', ...flags, '--set', 'speculative_num_steps=4'], { env }), line);
    expectOneLine(await runCliAs(user, ['rollback', ...flags], { env }), line);
    const config = writeConfig(join(user.home, 'ls-fail'), 2);
    expectOneLine(
      await runCliAs(user, ['tune', '-c', config, '--ssh-config', sshConfig], { env, cwd: join(user.home, 'ls-fail') }),
      line,
    );
    expect(hostState()).toBe(before);
    expect(existsSync(join(user.home, 'ls-fail', 'tune.db'))).toBe(false);
  });

  it("apply and rollback work with the user's own action log (~/.local/state/spectune)", async () => {
    const log = join(user.home, '.local/state/spectune/actions.jsonl');
    const apply = await runCliAs(user, ['apply', ...flags, '--set', 'speculative_num_steps=4']);
    expect(apply.code, apply.stderr).toBe(0);
    expect(readStepsInForce(h, UNIT)).toBe(4);
    const back = await runCliAs(user, ['rollback', ...flags, '--to', 'none']);
    expect(back.code, back.stderr).toBe(0);
    expect(readStepsInForce(h, UNIT)).toBe(START_STEPS);
    const actions = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { action: string; unit: string });
    expect(actions.filter((a) => a.unit === UNIT).map((a) => a.action)).toEqual(
      expect.arrayContaining(['deploy', 'restart', 'rollback']),
    );
    expect(statSync(log).uid).toBe(user.uid);
    // Nothing of this user's went to the shared log (other runs as root may have written there).
    if (existsSync(`${SHARED}/actions.jsonl`))
      expect(readFileSync(`${SHARED}/actions.jsonl`, 'utf8')).not.toContain(UNIT);
  });

  it("tune works with the store and the campaign's action log next to the config", async () => {
    const dir = join(user.home, 'ls-tune');
    const config = writeConfig(dir, 2);
    const r = await runCliAs(user, ['tune', '-c', config, '--ssh-config', sshConfig, '--json'], { cwd: dir });
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    const log = join(dir, 'tune.db.actions', 'campaign-1.jsonl');
    expect(readFileSync(log, 'utf8')).toMatch(/"action":"deploy"/);
    expect(statSync(join(dir, 'tune.db')).uid).toBe(user.uid);
    // The report finds the campaign's actions at the new place: its timeline lists them.
    const rep = await runCliAs(user, ['report', '--db', join(dir, 'tune.db'), '--md', join(dir, 'report.md')], {
      cwd: dir,
    });
    expect(rep.code, rep.stderr).toBe(0);
    expect(readFileSync(join(dir, 'report.md'), 'utf8')).toMatch(
      new RegExp(`deploy ${UNIT.replace('.', '\\.')} on ${h.name} by spectune`),
    );
  });
});

describe('the action log fails after the first host change', () => {
  it('apply (ENOSPC on its first record) puts the candidate back before any restart, in one line', async () => {
    const before = sshRun(
      h,
      `systemctl cat ${UNIT}; systemctl show -p MainPID -p NRestarts -p NeedDaemonReload ${UNIT}; ls /run/systemd/system/${UNIT}.d 2>/dev/null; true`,
    );
    const r = await runCli(
      ['apply', ...flags.map((f) => (f === sshConfig ? h.sshConfig : f)), '--set', 'speculative_num_steps=5'],
      { SPECTUNE_ACTION_LOG: '/dev/full' },
    );
    expect(r.code, r.stderr).toBe(1);
    // Progress said the drop-in went in; the error is the one last line.
    expect(r.stderr).not.toMatch(/internal error|This is a bug|\n\s+at /);
    expect(r.stderr.trim().split('\n').pop()).toMatch(
      new RegExp(
        `^spectune: action log /dev/full: cannot write it: no space left on device \\(ENOSPC\\); ${h.name}: ${UNIT.replace('.', '\\.')} was put back on .* before any restart`,
      ),
    );
    expect(
      sshRun(
        h,
        `systemctl cat ${UNIT}; systemctl show -p MainPID -p NRestarts -p NeedDaemonReload ${UNIT}; ls /run/systemd/system/${UNIT}.d 2>/dev/null; true`,
      ),
    ).toBe(before);
  });

  it("tune (ENOSPC on the first candidate's record) returns the host to known-good and says so in one line", async () => {
    const unitBefore = sshRun(h, `systemctl cat ${UNIT}`);
    // known-good is whatever the previous campaign left (its winner, or the unit's own steps when the baseline won)
    const stepsBefore = readStepsInForce(h, UNIT);
    const dir = join(user.home, 'ls-midrun');
    const config = writeConfig(dir, 3);
    const r = await runCli(['tune', '-c', config, '--ssh-config', h.sshConfig], { SPECTUNE_ACTION_LOG: '/dev/full' });
    expect(r.code, r.stderr.slice(-2000)).toBe(1);
    expect(r.stderr).not.toMatch(/internal error|This is a bug|\n\s+at /);
    expect(r.stderr.trim().split('\n').pop()).toMatch(
      /^spectune: action log \/dev\/full: cannot write it: no space left on device \(ENOSPC\)/,
    );
    expect(r.stderr).toMatch(/returning the service to its known-good config/);
    expect(sshRun(h, `systemctl cat ${UNIT}`)).toBe(unitBefore);
    expect(
      sshRun(
        h,
        `systemctl show -p NeedDaemonReload -p ActiveState ${UNIT}; ls /run/systemd/system/${UNIT}.d 2>/dev/null; true`,
      ).trim(),
    ).toBe('ActiveState=active\nNeedDaemonReload=no');
    expect(readStepsInForce(h, UNIT)).toBe(stepsBefore);
  });
});
