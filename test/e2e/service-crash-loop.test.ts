// A crash loop that `systemctl status` shows as "active (running)": the sim serves, crashes on its first request
// (--sim-fault crash-after=1, a CUDA illegal memory access), systemd restarts it, traffic crashes it again.
// spectune's checkLoop finds it from NRestarts/PID changes with a fatal line each time, diagnoses and stops it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFileActionLog, createServiceController, parseUnitState } from '../../src/service/index.js';
import { parseActionLog } from '../../src/diagnose/state.js';
import { readFileSync } from 'node:fs';
import { installSimUnit, removeSimUnit, runCli, sh, waitHealthy, type SimUnit } from './service-helpers.js';

/** Traffic interval: each start gets a request within a second of being up. */
const TRAFFIC_EVERY_MS = 300;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Send small requests until stopped (errors expected: the server keeps dying).
function startTraffic(endpoint: string): { stop: () => Promise<void> } {
  let running = true;
  const loop = (async () => {
    while (running) {
      await fetch(`${endpoint}/generate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        signal: AbortSignal.timeout(2000),
        body: JSON.stringify({ text: 'hi', sampling_params: { max_new_tokens: 8 } }),
      })
        .then((r) => r.text())
        .catch(() => '');
      await sleep(TRAFFIC_EVERY_MS);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

describe('crash loop while systemd says active', () => {
  let u: SimUnit;
  beforeAll(async () => {
    u = await installSimUnit('loop', 31405, { extraArgs: '--sim-fault crash-after=1' });
    await waitHealthy(u.endpoint);
  });
  afterAll(async () => {
    if (u) {
      await removeSimUnit(u.host, u.unit);
      await u.host.close();
    }
  });

  it('is detected, diagnosed as crash_loop with its cause, and stopped', async () => {
    const traffic = startTraffic(u.endpoint);
    try {
      // Wait until systemd has restarted it and shows it "active (running)" again: the misleading status of seed 2.
      let seenActiveAfterRestart = false;
      for (let i = 0; i < 100 && !seenActiveAfterRestart; i++) {
        const s = parseUnitState(
          await sh(u.host, ['systemctl', 'show', '-p', 'ActiveState,SubState,NRestarts', u.unit]),
        );
        seenActiveAfterRestart = s.activeState === 'active' && s.subState === 'running' && (s.nRestarts ?? 0) >= 1;
        if (!seenActiveAfterRestart) await sleep(200);
      }
      expect(seenActiveAfterRestart).toBe(true);
      // `spectune status` (whatever phase of the loop it catches) points at the restarts.
      const st = await runCli(['status', ...u.flags]);
      expect(st.stdout).toMatch(/warning: systemd restarted it \d+ time\(s\)/);

      const ctl = createServiceController({
        host: u.host,
        unit: u.unit,
        engine: 'sglang',
        endpoint: u.endpoint,
        actionLog: createFileActionLog(u.actionLog),
      });
      const r = await ctl.checkLoop({ windowMs: 20_000 });
      expect(r.status).toBe('failed');
      if (r.status !== 'failed') return;
      expect(r.looping).toBe(true);
      expect(r.verdict.class).toBe('crash_loop');
      expect(r.verdict.cause).not.toBeNull();
      expect(r.journal).toMatch(/RuntimeError: CUDA error: an illegal memory access was encountered/);
      expect(r.timeToVerdictMs).not.toBeNull();
      console.log(
        `active crash loop: ${r.verdict.class} (cause ${r.verdict.cause}), timeToVerdictMs=${r.timeToVerdictMs}`,
      );
      expect(r.timeToVerdictMs!).toBeLessThan(5000);
    } finally {
      await traffic.stop();
    }
    expect((await u.host.exec(['systemctl', 'is-active', u.unit])).stdout.trim()).toBe('inactive');
    const actions = parseActionLog(readFileSync(u.actionLog, 'utf8')).actions;
    expect(actions.map((a) => `${a.action}:${a.by}`)).toEqual(['stop:spectune']);
  });
});
