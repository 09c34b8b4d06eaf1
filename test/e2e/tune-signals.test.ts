// Every way an operator's terminal ends a `spectune tune` on a real systemd host: SIGTERM (`timeout 90 spectune tune`),
// SIGHUP (a closed SSH terminal) and a double Ctrl-C, each while a candidate is being benchmarked. Each time the run
// rolls back to known-good, releases the host lock, marks the campaign interrupted and says so in one line; the host
// is left on known-good byte for byte with no daemon-reload pending, and the next run needs no --break-lock.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTestHosts, type TestHost } from './helpers/testhosts.js';
import { installSimUnit, removeSimUnit, runCli, sshRun, writeTuneConfig } from './tune-support.js';

const UNIT = 'spectune-tune-signals-e2e.service';
const PORT = 32010;

// What the host holds for the unit after a run: the markers, the drop-in in /etc against the kept good version.
function hostState(h: TestHost) {
  const out = sshRun(
    h,
    [
      `st=/var/lib/spectune/${UNIT}`,
      'good=$(cat $st/good 2>/dev/null || echo none)',
      'echo "good=$good current=$(cat $st/current 2>/dev/null || echo none)"',
      `test -e $st/lock && echo lock=held || echo lock=free`,
      `test -e /run/systemd/system/${UNIT}.d/90-spectune.trial.conf && echo trial=present || echo trial=absent`,
      `if [ "$good" = none ]; then test -e /etc/systemd/system/${UNIT}.d/90-spectune.conf && echo etc=extra || echo etc=same; else cmp -s $st/dropins/$good.conf /etc/systemd/system/${UNIT}.d/90-spectune.conf && echo etc=same || echo etc=differs; fi`,
      `echo reload=$(systemctl show -p NeedDaemonReload --value ${UNIT}) active=$(systemctl is-active ${UNIT})`,
    ].join('; '),
  );
  return Object.fromEntries(
    out
      .trim()
      .split(/\s+/)
      .map((kv) => kv.split('=') as [string, string]),
  );
}

describe('tune ended by SIGTERM, SIGHUP and a double Ctrl-C', () => {
  let host: TestHost;
  let config: string;
  const env = { SPECTUNE_ACTION_LOG: join(mkdtempSync(join(tmpdir(), 'spectune-actions-')), 'actions.jsonl') };
  beforeAll(() => {
    host = loadTestHosts().find((h) => h.name === 'th1') ?? loadTestHosts()[0];
    installSimUnit(host, UNIT, PORT);
    config = writeTuneConfig(host, UNIT, PORT).config;
  });
  afterAll(() => {
    if (host) removeSimUnit(host, UNIT);
  });

  const cases: Array<{ sig: NodeJS.Signals; twice?: boolean; code: number }> = [
    { sig: 'SIGTERM', code: 143 },
    { sig: 'SIGHUP', code: 129 },
    { sig: 'SIGINT', twice: true, code: 130 },
  ];
  for (const c of cases) {
    it(`${c.sig}${c.twice ? ' twice, 0.3 s apart,' : ''} mid-benchmark: rolled back, unlocked, interrupted, one line, exit ${c.code}`, async () => {
      let benchOfCandidate = false;
      const r = await runCli(
        ['tune', '-c', config, '--json', '--ssh-config', host.sshConfig, ...(c.sig === 'SIGTERM' ? [] : ['--resume'])],
        env,
        (e) => {
          if (e.type === 'trial:start')
            benchOfCandidate = (e.config as { speculative_num_steps?: number }).speculative_num_steps !== 3;
          return benchOfCandidate && e.type === 'trial:phase' && e.phase === 'bench';
        },
        c.sig,
        c.twice ? 300 : undefined,
      );
      expect(r.code, r.stderr.slice(-3000)).toBe(c.code);
      expect((JSON.parse(r.stdout) as { status: string }).status).toBe('interrupted');
      expect(r.events.some((e) => e.type === 'service:action' && e.action === 'rollback')).toBe(true);
      expect(r.stderr).toContain(
        `spectune: ${c.sig} received: rolling back to known-good, releasing the lock, marking the campaign interrupted`,
      );
      if (c.twice)
        expect(r.stderr).toContain('spectune: rolling back, press Ctrl-C again to leave the host to its lease');
      expect(hostState(host)).toMatchObject({
        lock: 'free',
        trial: 'absent',
        etc: 'same',
        reload: 'no',
        active: 'active',
      });
    });
  }
});
