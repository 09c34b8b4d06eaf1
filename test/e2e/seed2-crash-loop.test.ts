// Seed 2 for real: `spectune apply --set speculative_num_steps=10` on a sim unit under real systemd. The sim fails
// start-up with "RuntimeError: Not enough memory", systemd restarts it in a loop; spectune must report crash_loop
// with cause kv_cache_oom and the root exception within 5 s of the first fatal line, then roll back and verify.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseActionLog } from '../../src/diagnose/state.js';
import { readFileSync } from 'node:fs';
import {
  installSimUnit,
  journalText,
  removeSimUnit,
  runCli,
  sh,
  waitHealthy,
  hostEpoch,
  type SimUnit,
} from './service-helpers.js';

/** The target: a verdict within 5 s of the fatal log line. */
const VERDICT_BUDGET_MS = 5000;

describe('seed 2: crash loop after speculative_num_steps=10, diagnosed fast and rolled back', () => {
  let u: SimUnit;
  beforeAll(async () => {
    u = await installSimUnit('seed2', 31402);
    await waitHealthy(u.endpoint);
  });
  afterAll(async () => {
    if (u) {
      await removeSimUnit(u.host, u.unit);
      await u.host.close();
    }
  });

  it('reports crash_loop (cause kv_cache_oom) with the root exception within 5 s, rolls back, and the service is healthy again', async () => {
    const since = await hostEpoch(u.host);
    const r = await runCli(['apply', ...u.flags, '--set', 'speculative_num_steps=10'], {
      SPECTUNE_ACTION_LOG: u.actionLog,
    });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toMatch(/crash_loop \(cause: kv_cache_oom\)/);
    expect(r.stdout).toMatch(
      /root exception: RuntimeError: Not enough memory\. Please try to increase --mem-fraction-static\./,
    );
    const ttv = Number(/verdict ([\d.]+) s after the fatal log line/.exec(r.stdout)?.[1]);
    expect(ttv * 1000).toBeLessThan(VERDICT_BUDGET_MS);
    expect(r.stdout).toMatch(/rolled back to the unit's own config \(no spectune drop-in\): ready/);
    console.log(`seed 2 (human run): verdict ${ttv} s after the fatal line`);

    // systemd really looped: the journal, read directly, shows the restart and the fatal line.
    const journal = await journalText(u.host, u.unit, since);
    expect(journal).toMatch(/Scheduled restart job, restart counter is at 1\./);
    expect(journal).toMatch(/Traceback \(most recent call last\)/);
    expect(journal).toMatch(/--speculative-num-steps 10|speculative_num_steps=10/);

    // Back on the operator's config: no drop-in, steps=3, healthy.
    const ls = await u.host.exec(['test', '-e', `/etc/systemd/system/${u.unit}.d/90-spectune.conf`]);
    expect(ls.exitCode).toBe(1);
    const st = await runCli(['status', ...u.flags], { SPECTUNE_ACTION_LOG: u.actionLog });
    expect(st.code, st.stderr).toBe(0);
    expect(st.stdout).toMatch(/active \(running\)/);
    expect(st.stdout).toMatch(/speculative_num_steps=3\b/);
    expect(st.stdout).toMatch(/-> 200 \(ok\)/);

    // Every action was recorded, by spectune, with its reason.
    const actions = parseActionLog(readFileSync(u.actionLog, 'utf8')).actions;
    expect(actions.map((a) => a.action)).toEqual(['deploy', 'restart', 'stop', 'rollback', 'restart']);
    expect(actions.every((a) => a.by === 'spectune' && a.unit === u.unit && a.host === u.th.name && a.why)).toBe(true);
  });

  it('prints the --json contract and measures timeToVerdictMs from the fatal line', async () => {
    const r = await runCli(['apply', ...u.flags, '--set', 'speculative_num_steps=10', '--json'], {
      SPECTUNE_ACTION_LOG: u.actionLog,
    });
    expect(r.code, r.stderr).toBe(1);
    const out = JSON.parse(r.stdout) as Record<string, unknown> & {
      verdict: { class: string; cause: string; evidence: { text: string }[] };
      timeToVerdictMs: number;
    };
    expect(Object.keys(out).sort()).toEqual(['config', 'status', 'timeToVerdictMs', 'verdict']);
    expect(out.status).toBe('rolled_back');
    expect(out.config).toMatchObject({ speculative_num_steps: 10 });
    expect(out.verdict.class).toBe('crash_loop');
    expect(out.verdict.cause).toBe('kv_cache_oom');
    expect(out.verdict.evidence.map((e) => e.text).join('\n')).toContain('RuntimeError: Not enough memory');
    expect(out.timeToVerdictMs).toBeGreaterThan(0);
    expect(out.timeToVerdictMs).toBeLessThan(VERDICT_BUDGET_MS);
    console.log(`seed 2 (--json run): timeToVerdictMs=${out.timeToVerdictMs}`);
    expect((await sh(u.host, ['systemctl', 'is-active', u.unit])).trim()).toBe('active');
  });
});
