// Dry-run gaps (issue 19 part 4) on a real systemd host (th2, port 32330): `tune --resume --dry-run` says what the
// resume would roll back and redo and changes nothing (store, unit, lock); a dry run while another run holds the
// unit's host lock names the holder instead of planning as if the unit were free.
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCampaign, markTrialState, openStore, recordTrialStart } from '../../src/store/index.js';
import { installSimUnit, removeSimUnit, runCli, sh, waitHealthy, type SimUnit } from './service-helpers.js';

describe('tune --dry-run: resume and a held lock', () => {
  let u: SimUnit;
  let dir: string;
  let config: string;
  let store: string;
  const lock = () => `/var/lib/spectune/${u.unit}/lock`;
  beforeAll(async () => {
    u = await installSimUnit('edges2-dry', 32330);
    await waitHealthy(u.endpoint);
    dir = mkdtempSync(join(tmpdir(), 'spectune-edges2-dry-'));
    config = join(dir, 'spectune.yaml');
    store = join(dir, 'tune.db');
    writeFileSync(
      config,
      [
        'target:',
        '  engine: sglang',
        `  endpoint: ${u.endpoint}`,
        '  manager: systemd',
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

  it('--resume --dry-run names the campaign and the interrupted trial it would roll back and redo; nothing changes', async () => {
    // A campaign killed in its second trial, as tune leaves it (named host:unit, as tune names it).
    const db = openStore(store);
    const c = createCampaign(db, { name: `${u.th.name}:${u.unit}`, engine: 'sglang', config: {} });
    recordTrialStart(db, {
      campaignId: c.id,
      params: { speculative_num_steps: 3 },
      purpose: 'baseline',
      reason: 'baseline',
      prediction: null,
    });
    db.prepare("UPDATE trials SET state = 'measured' WHERE campaign_id = ?").run(c.id);
    markTrialState(
      db,
      recordTrialStart(db, {
        campaignId: c.id,
        params: { speculative_num_steps: 4 },
        purpose: 'search',
        reason: 'climb',
        prediction: null,
      }).id,
      'deploying',
    );
    db.close();
    const before = {
      store: readFileSync(store),
      mtime: statSync(store).mtimeMs,
      unit: await sh(u.host, ['systemctl', 'cat', u.unit]),
    };
    const r = await runCli(['tune', '-c', config, '--ssh-config', u.th.sshConfig, '--resume', '--dry-run']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(
        `resume:\\n  would resume campaign #${c.id} "${u.th.name}:${u.unit.replace(/\./g, '\\.')}" \\(running\\), keeping its 1 finished trial\\n  trial 2 \\(\\{"speculative_num_steps":4\\}\\) was interrupted: it would be discarded, the service rolled back to its known-good config, and the trial redone`,
      ),
    );
    expect(readFileSync(store).equals(before.store)).toBe(true);
    expect(await sh(u.host, ['systemctl', 'cat', u.unit])).toBe(before.unit);
    expect((await u.host.exec(['test', '-e', lock()])).exitCode).not.toBe(0);
  }, 120_000);

  it('a dry run while another run holds the lock names the holder', async () => {
    const now = Date.now();
    const record = {
      token: 'edges2',
      owner: { user: 'ops', machine: 'other-ws', pid: 4242 },
      command: 'tune',
      unit: u.unit,
      startedAt: now,
      heartbeatAt: now,
      leaseMs: 600_000,
    };
    await sh(u.host, ['mkdir', '-p', `/var/lib/spectune/${u.unit}`]);
    await u.host.writeFile(lock(), `${JSON.stringify(record)}\n`);
    const r = await runCli(['tune', '-c', config, '--ssh-config', u.th.sshConfig, '--dry-run']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(
        `^warning: ${u.th.name} ${u.unit.replace(/\./g, '\\.')}: locked by ops@other-ws pid 4242 \\(spectune tune\\) since \\S+: the real run would be refused`,
        'm',
      ),
    );
    // The dry run left the other run's lock as it was.
    expect(JSON.parse(await sh(u.host, ['cat', lock()]))).toEqual(record);
  }, 120_000);
});
