// Issue 19 part 4 on a real systemd host (th2, ports 32300-32309): a SIMULATED SGLang unit started with --api-key
// (the sim guards every path but /health*, /metrics* as SGLang's add_api_key_middleware does).
// - doctor FAILs when spectune has no key or a wrong one, naming the variable that carries it; PASSes with the right one,
//   and then every one of its probes sends the key;
// - spectune's own probes (the drain's /metrics + /server_info before a restart) send the key: no 401 in the journal;
// - an endpoint on another port than the unit's --port fails at once, in apply, apply --dry-run and tune --dry-run.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  hostEpoch,
  installSimUnit,
  journalText,
  removeSimUnit,
  runCli,
  waitHealthy,
  type SimUnit,
} from './service-helpers.js';

const KEY = 'edges2-s3cret-key';
const PORT = 32300;

interface DoctorJson {
  checks: { id: string; status: string; summary: string; fix: string | null }[];
}

// The api-key check of a doctor run.
function apiKeyCheck(stdout: string): DoctorJson['checks'][number] | undefined {
  return (JSON.parse(stdout) as DoctorJson).checks.find((c) => c.id === 'api-key');
}

describe("the engine's API key and its port", () => {
  let u: SimUnit;
  beforeAll(async () => {
    u = await installSimUnit('edges2-key', PORT, { extraArgs: `--api-key ${KEY}` });
    await waitHealthy(u.endpoint);
  }, 180_000);
  afterAll(async () => {
    if (u) {
      await removeSimUnit(u.host, u.unit);
      await u.host.close();
    }
  });

  it('doctor fails without a key and with a wrong one, naming SPECTUNE_API_KEY; passes with the right one', async () => {
    const none = await runCli(['doctor', ...u.flags, '--json'], { SPECTUNE_API_KEY: '' });
    expect(none.code, none.stderr).toBe(1);
    expect(apiKeyCheck(none.stdout)).toMatchObject({
      status: 'FAIL',
      summary: expect.stringContaining('→ 401'),
      fix: expect.stringMatching(/^export SPECTUNE_API_KEY=/),
    });
    const wrong = await runCli(['doctor', ...u.flags, '--json'], { SPECTUNE_API_KEY: 'not-the-key' });
    expect(apiKeyCheck(wrong.stdout)).toMatchObject({
      status: 'FAIL',
      summary: expect.stringContaining('refuses the key spectune sends, from $SPECTUNE_API_KEY'),
    });
    expect(wrong.stdout + wrong.stderr).not.toContain('not-the-key');
    const since = await hostEpoch(u.host);
    const right = await runCli(['doctor', ...u.flags, '--json'], { SPECTUNE_API_KEY: KEY });
    expect(apiKeyCheck(right.stdout)).toMatchObject({
      status: 'PASS',
      summary: expect.stringContaining('accepts the key from $SPECTUNE_API_KEY'),
    });
    // every probe of the doctor with the right key sends it (its load reading asked /server_info without it once)
    const journal = await journalText(u.host, u.unit, since);
    expect(journal).toMatch(/"GET \/server_info HTTP\/1.1" 200/);
    expect(
      journal.split('\n').filter((l) => /" 401 Unauthorized/.test(l)),
      'requests the engine refused',
    ).toEqual([]);
  }, 120_000);

  it('apply probes the engine with the key: no 401 line in the journal', async () => {
    const since = await hostEpoch(u.host);
    const r = await runCli(['apply', ...u.flags, '--set', 'speculative_num_steps=4', '--lease', '0'], {
      SPECTUNE_API_KEY: KEY,
      SPECTUNE_ACTION_LOG: u.actionLog,
    });
    expect(r.code, r.stderr).toBe(0);
    const journal = await journalText(u.host, u.unit, since);
    // The drain before the restart asked /metrics and /server_info (proof the probes ran), none refused.
    expect(journal).toMatch(/"GET \/server_info HTTP\/1.1" 200/);
    expect(
      journal.split('\n').filter((l) => /" 401 Unauthorized/.test(l)),
      'requests the engine refused',
    ).toEqual([]);
  }, 180_000);

  it("an endpoint on another port than the unit's --port fails at once: apply, apply --dry-run, tune --dry-run", async () => {
    const wrong = u.endpoint.replace(`:${PORT}`, `:${PORT + 9}`);
    const flags = u.flags.map((f) => (f === u.endpoint ? wrong : f));
    const line = `--endpoint ${wrong} is port ${PORT + 9}, but ${u.unit} listens on --port ${PORT}`;
    for (const dry of [true, false]) {
      const t0 = Date.now();
      const r = await runCli(['apply', ...flags, '--set', 'speculative_num_steps=5', ...(dry ? ['--dry-run'] : [])], {
        SPECTUNE_API_KEY: KEY,
        SPECTUNE_ACTION_LOG: u.actionLog,
      });
      expect(r.code, r.stdout).toBe(1);
      expect(r.stderr).toContain(line);
      expect(r.stderr).toContain(`set --endpoint to ${u.endpoint}`);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(Date.now() - t0).toBeLessThan(30_000);
    }
    const dir = mkdtempSync(join(tmpdir(), 'spectune-edges2-'));
    const config = join(dir, 'spectune.yaml');
    writeFileSync(
      config,
      [
        'target:',
        '  engine: sglang',
        `  endpoint: ${wrong}`,
        '  apiKeyEnv: SPECTUNE_API_KEY',
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
    const t = await runCli(['tune', '-c', config, '--ssh-config', u.th.sshConfig, '--dry-run'], {
      SPECTUNE_API_KEY: KEY,
    });
    expect(t.code, t.stdout).toBe(1);
    expect(t.stderr).toContain(`target.endpoint ${wrong} is port ${PORT + 9}, but ${u.unit} listens on --port ${PORT}`);
  }, 120_000);
});
