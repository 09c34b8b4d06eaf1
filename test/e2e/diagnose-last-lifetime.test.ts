// Live diagnose judges the unit's last lifetime (issue 19): a journal with an old KV-cache OOM loop, then a healthy
// start that served requests and an operator's `systemctl stop`. The verdict is that requested stop (clean_stop,
// crashed: false), not the older kv_cache_oom.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  hostEpoch,
  installSimUnit,
  journalText,
  removeSimUnit,
  renderSimUnit,
  runCli,
  sh,
  waitHealthy,
  type SimUnit,
} from './service-helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('live diagnose: the last lifetime, not an older failure', () => {
  let u: SimUnit;
  let since = '';
  beforeAll(async () => {
    // steps=10 (appended after the template's steps=3; the last flag wins) fails start-up: Not enough memory.
    u = await installSimUnit('lastlife', 31470, { start: false, extraArgs: '--speculative-num-steps 10' });
    since = await hostEpoch(u.host);
    await sh(u.host, ['systemctl', 'start', u.unit]);
    for (let i = 0; i < 120 && !/restart counter is at 1\b/.test(await journalText(u.host, u.unit, since)); i++)
      await sleep(500);
    await u.host.writeFile(`/etc/systemd/system/${u.unit}`, renderSimUnit(u.unit, u.port, 30));
    await sh(u.host, ['systemctl', 'daemon-reload']);
    await sh(u.host, ['systemctl', 'restart', u.unit]);
    await waitHealthy(u.endpoint);
    for (let i = 0; i < 3; i++) {
      const r = await fetch(`${u.endpoint}/generate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'hi', sampling_params: { max_new_tokens: 8 } }),
      });
      expect(r.status).toBe(200);
      await r.text();
    }
    await sh(u.host, ['systemctl', 'stop', u.unit]);
  }, 180_000);
  afterAll(async () => {
    if (u) {
      await removeSimUnit(u.host, u.unit);
      await u.host.close();
    }
  });

  it('calls the operator stop after a healthy run a requested stop, not the earlier kv_cache_oom', async () => {
    const journal = await journalText(u.host, u.unit, since);
    expect(journal).toMatch(/Not enough memory/);
    expect(journal).toMatch(/restart counter is at 1\b/);
    const d = await runCli([
      'diagnose',
      '--host',
      u.th.name,
      '--ssh-config',
      u.th.sshConfig,
      '--unit',
      u.unit,
      '--since',
      since,
      '--json',
    ]);
    expect(d.code, d.stderr).toBe(0);
    const out = JSON.parse(d.stdout) as {
      verdict: { class: string; crashed?: boolean; summary: string; facts?: Record<string, unknown> };
      lifetimes: { cause?: string | null }[];
    };
    expect(out.verdict.class, out.verdict.summary).toBe('clean_stop');
    expect(out.verdict.crashed).toBe(false);
    console.log(`last-lifetime verdict: ${out.verdict.summary}`);
    expect(out.verdict.summary).toMatch(/stop/i);
    expect(out.verdict.summary).toMatch(/served 3 requests/);
    // the older failure is still listed among the lifetimes, only not the verdict
    expect(out.lifetimes.some((l) => l.cause === 'kv_cache_oom')).toBe(true);
    const text = await runCli([
      'diagnose',
      '--host',
      u.th.name,
      '--ssh-config',
      u.th.sshConfig,
      '--unit',
      u.unit,
      '--since',
      since,
    ]);
    expect(text.stdout).not.toMatch(/^kv_cache_oom/m);
    expect(text.stdout).toMatch(/earlier lifetime/);
  });
});
