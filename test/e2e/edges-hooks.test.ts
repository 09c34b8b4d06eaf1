// Restart hooks and the drain timeout on a real systemd host (th2, port 32320; issue 19 part 4): target.hooks'
// commands run on this machine, preStop before the stop and postReady once the engine is ready; a dry run shows them
// and runs none; --drain-timeout is a flag.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installSimUnit, removeSimUnit, runCli, waitHealthy, type SimUnit } from './service-helpers.js';

describe('restart hooks', () => {
  let u: SimUnit;
  let dir: string;
  let config: string;
  let marks: string;
  beforeAll(async () => {
    u = await installSimUnit('edges2-hooks', 32320);
    await waitHealthy(u.endpoint);
    dir = mkdtempSync(join(tmpdir(), 'spectune-edges2-hooks-'));
    marks = join(dir, 'marks');
    config = join(dir, 'spectune.yaml');
    writeFileSync(
      config,
      [
        'target:',
        '  engine: sglang',
        `  endpoint: ${u.endpoint}`,
        '  manager: systemd',
        '  lease: 0',
        '  drainTimeout: 2m',
        '  hooks:',
        `    preStop: [[sh, -c, 'echo "pre $(date +%s%N)" >> "$0"', ${marks}]]`,
        `    postReady: [[sh, -c, 'echo "post $(date +%s%N)" >> "$0"', ${marks}]]`,
        '    timeout: 20s',
        '  hosts:',
        `    - host: ${u.th.name}`,
        `      unit: ${u.unit}`,
        'space:',
        '  speculative_num_steps: { min: 1, max: 10 }',
        'objective: { metric: decodeTokensPerSec.mean, concurrency: 1 }',
        'benchmark: { concurrency: [1], requests: 4 }',
        'budget: { trials: 3 }',
        'store: ./tune.db',
        '',
      ].join('\n'),
    );
  }, 180_000);
  afterAll(async () => {
    if (u) {
      await removeSimUnit(u.host, u.unit);
      await u.host.close();
    }
  });

  it('apply --dry-run shows the hooks and runs none', async () => {
    const r = await runCli(
      [
        'apply',
        '-c',
        config,
        '--ssh-config',
        u.th.sshConfig,
        '--set',
        'speculative_num_steps=4',
        '--drain-timeout',
        '30s',
        '--dry-run',
      ],
      { SPECTUNE_ACTION_LOG: u.actionLog },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('hooks (target.hooks):');
    expect(r.stdout).toMatch(
      /preStop hook: sh -c echo "pre \$\(date \+%s%N\)" >> "\$0" \S+marks \(on this machine, limit 20 s, before the stop\)/,
    );
    expect(r.stdout).toContain('(on this machine, limit 20 s, once the engine is ready)');
    expect(existsSync(marks)).toBe(false);
  }, 60_000);

  it('apply runs preStop before the stop and postReady after the ready', async () => {
    const r = await runCli(
      [
        'apply',
        '-c',
        config,
        '--ssh-config',
        u.th.sshConfig,
        '--set',
        'speculative_num_steps=4',
        '--drain-timeout',
        '30s',
      ],
      { SPECTUNE_ACTION_LOG: u.actionLog },
    );
    expect(r.code, r.stderr).toBe(0);
    const lines = readFileSync(marks, 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(' '));
    expect(lines.map((l) => l[0])).toEqual(['pre', 'post']);
    const order = r.stderr
      .split('\n')
      .filter((l) => /preStop hook|restart \(|ready after|postReady hook/.test(l))
      .map((l) => /preStop|restart|ready after|postReady/.exec(l)?.[0]);
    expect(order).toEqual(['preStop', 'restart', 'ready after', 'postReady']);
  }, 120_000);

  it('a bad --drain-timeout is one usage line', async () => {
    const r = await runCli([
      'apply',
      '-c',
      config,
      '--ssh-config',
      u.th.sshConfig,
      '--set',
      'speculative_num_steps=5',
      '--drain-timeout',
      'soon',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--drain-timeout: expected a duration (or 0 for no wait), got "soon"');
  });
});
