// An engine killed (SIGKILL of its main PID) while a candidate is benchmarked, on a real systemd host (issue 19): the
// trial fails like a failed start, with a verdict read from the journal (external_kill), is rolled back, and the report
// counts it as failed ("No trial failed" was printed before, and the trial was a constraint violation).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTestHosts, type TestHost } from './helpers/testhosts.js';
import {
  installSimUnit,
  readStepsInForce,
  removeSimUnit,
  runCli,
  START_STEPS,
  writeTuneConfig,
} from './tune-support.js';

const UNIT = 'spectune-camp2-killed-e2e.service';
const PORT = 32310;
/** Into the benchmark before the kill: the first of its 4 requests is streaming. */
const KILL_AFTER_MS = 300;

describe('an engine killed during a benchmark', () => {
  let host: TestHost;
  let config: string;
  let dir: string;
  const env = { SPECTUNE_ACTION_LOG: join(mkdtempSync(join(tmpdir(), 'spectune-actions-')), 'actions.jsonl') };
  beforeAll(() => {
    host = loadTestHosts().find((h) => h.name === 'th3') ?? loadTestHosts()[0];
    installSimUnit(host, UNIT, PORT);
    ({ dir, config } = writeTuneConfig(host, UNIT, PORT));
    writeFileSync(
      config,
      readFileSync(config, 'utf8').replace('budget: { trials: 12, hours: 1h }', 'budget: { trials: 3, hours: 1h }'),
    );
  });
  afterAll(() => {
    if (host) removeSimUnit(host, UNIT);
  });

  it('is a failed trial with the journal verdict, rolled back, and the report counts it', async () => {
    let candidate = 0;
    let killed = 0;
    const r = await runCli(['tune', '-c', config, '--json', '--ssh-config', host.sshConfig], env, (e) => {
      if (e.type === 'trial:start')
        candidate =
          (e.config as { speculative_num_steps?: number }).speculative_num_steps !== START_STEPS ? Number(e.trial) : 0;
      if (candidate && !killed && e.type === 'trial:phase' && e.phase === 'bench') {
        killed = candidate;
        spawn(
          'ssh',
          [
            '-F',
            host.sshConfig,
            host.name,
            `sleep ${KILL_AFTER_MS / 1000}; kill -9 $(systemctl show -p MainPID --value ${UNIT})`,
          ],
          { stdio: 'ignore' },
        );
      }
      return false;
    });
    expect(r.code, r.stderr.slice(-3000)).toBe(0);
    expect(killed).toBeGreaterThan(0);
    const end = r.events.find((e) => e.type === 'trial:end' && e.trial === killed) as
      | { status: string; verdict?: { class: string } | null; violations?: string[] }
      | undefined;
    expect(end?.status, JSON.stringify(end)).toBe('failed');
    expect(end?.verdict?.class).toBe('external_kill');
    expect(r.events.some((e) => e.type === 'service:action' && e.action === 'rollback')).toBe(true);
    expect(readStepsInForce(host, UNIT)).not.toBeNull();

    const md = await runCli(['report', '--db', join(dir, 'tune.db')], {});
    expect(md.code, md.stderr).toBe(0);
    expect(md.stdout).not.toContain('No trial failed');
    expect(md.stdout).toMatch(new RegExp(`### Trial ${killed}: [^\\n]*\\n\\n\\*\\*external_kill\\*\\*`));

    // logs --trial N is the campaign's trial N (as the report numbers it): the killed trial shows the kill, the
    // baseline (trial 1, no deploy) does not.
    const logsKilled = await runCli(
      ['logs', '-c', config, '--ssh-config', host.sshConfig, '--trial', String(killed)],
      {},
    );
    expect(logsKilled.code, logsKilled.stderr).toBe(0);
    expect(logsKilled.stdout).toMatch(/status=9\/KILL/);
    const logsBaseline = await runCli(['logs', '-c', config, '--ssh-config', host.sshConfig, '--trial', '1'], {});
    expect(logsBaseline.code, logsBaseline.stderr).toBe(0);
    expect(logsBaseline.stdout).not.toMatch(/status=9\/KILL/);
    console.log(`engine killed in trial ${killed}: ${JSON.stringify(end?.violations)}`);
  });
});
