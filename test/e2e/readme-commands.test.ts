// README vs reality, host half: every README command that acts on a service host runs against a real systemd test
// host (th2, a sim unit standing in for sglang-qwen). Host-changing commands run with --dry-run (rollback runs for
// real: nothing was deployed, so it must change nothing), and a dry run must leave no local store or action log.
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureCliBuilt, runCli } from '../unit/cli-run.js';
import {
  isSlurmCommand,
  judgeRun,
  needsHost,
  readReadmeCommands,
  type ReadmeCommand,
} from '../unit/readme-commands.js';
import { installSimUnit, removeSimUnit, sh, waitHealthy, type SimUnit } from './service-helpers.js';

/** Verbs that change a host: run with --dry-run unless the README line already has it. */
const CHANGING = new Set(['apply', 'tune']);

// The README's placeholders (root@gpu1, sglang-qwen, spectune.yaml) replaced by the test host and its sim unit.
function localize(c: ReadmeCommand, u: SimUnit): string[] {
  const out: string[] = [];
  for (let i = 0; i < c.argv.length; i++) {
    const a = c.argv[i];
    if (a === '--host') {
      out.push('--host', u.th.name, '--ssh-config', u.th.sshConfig);
      i++;
      continue;
    }
    if (a === '--unit') {
      out.push('--unit', u.unit);
      i++;
      continue;
    }
    out.push(a);
  }
  if (c.argv[0] === 'tune' || (c.argv[0] === 'diagnose' && c.argv.includes('-c')))
    out.push('--ssh-config', u.th.sshConfig);
  if (CHANGING.has(c.argv[0]) && !out.includes('--dry-run')) out.push('--dry-run');
  return out;
}

describe('README host commands on a real systemd host', () => {
  let u: SimUnit;
  let work: string;
  let pidBefore: string;
  const commands = readReadmeCommands().filter((c) => needsHost(c) && !isSlurmCommand(c));
  beforeAll(async () => {
    ensureCliBuilt();
    u = await installSimUnit('readme', 31408);
    await waitHealthy(u.endpoint);
    work = mkdtempSync(join(tmpdir(), 'spectune-readme-e2e-'));
    writeFileSync(
      join(work, 'spectune.yaml'),
      [
        'target:',
        '  engine: sglang',
        `  endpoint: ${u.endpoint}`,
        '  hosts:',
        `    - { host: ${u.th.name}, unit: ${u.unit} }`,
        'space:',
        '  speculative_num_steps: { min: 1, max: 5 }',
        'objective: { metric: decodeTokensPerSec.p50, concurrency: 1 }',
        'store: ./spectune.db',
        '',
      ].join('\n'),
    );
    pidBefore = await sh(u.host, ['systemctl', 'show', '-p', 'MainPID', '--value', u.unit]);
  });
  afterAll(async () => {
    if (u) {
      await removeSimUnit(u.host, u.unit);
      await u.host.close();
    }
  });

  it('finds the host commands (status, apply, rollback, logs, tune, live diagnose)', () => {
    expect(new Set(commands.map((c) => c.argv[0]))).toEqual(
      new Set(['diagnose', 'status', 'apply', 'rollback', 'logs', 'tune']),
    );
  });

  it('runs each one: exit < 2, no stack trace, no flag error; nothing changed on the host or here', async () => {
    const actionLog = join(work, 'actions.jsonl');
    for (const c of commands) {
      const argv = localize(c, u);
      const r = await runCli(argv, { cwd: work, env: { SPECTUNE_ACTION_LOG: actionLog } });
      const what = `spectune ${argv.join(' ')}\n${r.stderr}`;
      expect(judgeRun(r), what).toBeNull();
      if (c.argv[0] !== 'logs') expect(r.code, what).toBe(0);
    }
    expect(await sh(u.host, ['systemctl', 'show', '-p', 'MainPID', '--value', u.unit])).toBe(pidBefore);
    expect((await u.host.exec(['test', '-e', `/etc/systemd/system/${u.unit}.d/90-spectune.conf`])).exitCode).not.toBe(
      0,
    );
    expect(existsSync(join(work, 'spectune.db')), 'tune --dry-run must not create the store').toBe(false);
    expect(existsSync(actionLog), 'dry runs and a no-op rollback log no action').toBe(false);
  });
});
