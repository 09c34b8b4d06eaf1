// The systemd campaign interrupted by Ctrl-C once and killed with SIGKILL at several points, resumed each time: no
// finished trial lost or repeated, the service on a known-good config before the campaign goes on, left on the winner.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTestHosts, type TestHost } from './helpers/testhosts.js';
import {
  installSimUnit,
  readStepsInForce,
  removeSimUnit,
  runCli,
  writeTuneConfig,
  type CliRun,
} from './tune-support.js';

const UNIT = 'spectune-tune-resume-e2e.service';
const PORT = 31602;

type Ev = Record<string, unknown>;
interface Row {
  seq: number;
  purpose: string;
  state: string;
  params_json: string;
  reason: string;
}

// A kill predicate that fires on the n-th event matching `match`, tracking the config of the current trial.
function killOn(match: (e: Ev, steps: number | null) => boolean): (e: Ev) => boolean {
  let steps: number | null = null;
  return (e) => {
    if (e.type === 'trial:start')
      steps = (e.config as { speculative_num_steps?: number }).speculative_num_steps ?? null;
    return match(e, steps);
  };
}

/** Where each run is stopped: Ctrl-C mid-benchmark; SIGKILL mid-benchmark, during the crash loop of steps=10, during the soak. */
const KILLS = [
  killOn((e) => e.type === 'trial:phase' && e.phase === 'bench' && e.trial === 2),
  killOn((e) => e.type === 'trial:phase' && e.phase === 'bench' && e.trial === 4),
  killOn((e, steps) => e.type === 'service:action' && e.action === 'restart' && steps === 10),
  killOn((e) => e.type === 'trial:phase' && e.phase === 'soak'),
];

describe('spectune tune --resume after SIGKILL', () => {
  let host: TestHost;
  let dir: string;
  const runs: CliRun[] = [];

  beforeAll(async () => {
    host = loadTestHosts().find((h) => h.name === 'th3') ?? loadTestHosts()[0];
    installSimUnit(host, UNIT, PORT);
    const c = writeTuneConfig(host, UNIT, PORT);
    dir = c.dir;
    const env = { SPECTUNE_ACTION_LOG: join(mkdtempSync(join(tmpdir(), 'spectune-actions-')), 'actions.jsonl') };
    const args = ['tune', '-c', c.config, '--json', '--confirm-probes', '--ssh-config', host.sshConfig];
    for (const [i, kill] of KILLS.entries())
      runs.push(await runCli(i === 0 ? args : [...args, '--resume'], env, kill, i === 0 ? 'SIGINT' : 'SIGKILL'));
    runs.push(await runCli([...args, '--resume'], env));
  });
  afterAll(() => {
    if (host) removeSimUnit(host, UNIT);
  });

  it('Ctrl-C exits 130 on a known-good config; was killed at every other point and finished on resume', async () => {
    const ctrlC = runs[0];
    expect(ctrlC.code, ctrlC.stderr.slice(-2000)).toBe(130);
    expect((JSON.parse(ctrlC.stdout) as { status: string }).status).toBe('interrupted');
    expect(ctrlC.events.some((e) => e.type === 'service:action' && e.action === 'rollback')).toBe(true);
    runs.slice(1, KILLS.length).forEach((r, i) => {
      expect(r.signal, `run ${i + 1} was not killed:\n${r.stderr.slice(-2000)}`).toBe('SIGKILL');
    });
    const last = runs[runs.length - 1];
    expect(last.code, last.stderr.slice(-3000)).toBe(0);
    expect((JSON.parse(last.stdout) as { status: string }).status).toBe('done');
  });

  it('loses no finished trial and repeats none; each interrupted trial is redone once', () => {
    const db = new Database(join(dir, 'tune.db'), { readonly: true });
    const rows = db.prepare('SELECT seq, purpose, state, params_json, reason FROM trials ORDER BY seq').all() as Row[];
    db.close();
    const ended = runs.flatMap((r) => r.events.filter((e) => e.type === 'trial:end' && e.status !== 'skipped'));
    for (const e of ended) expect(rows.find((r) => r.seq === (e.trial as number))?.state).not.toBe('skipped');
    const finished = rows.filter((r) => r.state !== 'skipped');
    const keys = finished.map((r) => `${r.params_json} ${r.reason}`);
    expect(new Set(keys).size).toBe(keys.length);
    const skipped = rows.filter((r) => r.state === 'skipped');
    expect(skipped.length).toBe(KILLS.length);
    for (const s of skipped)
      expect(finished.some((f) => f.seq > s.seq && f.params_json === s.params_json && f.reason === s.reason)).toBe(
        true,
      );
  });

  it('brings the service back to a known-good config before going on, and ends on the winner', async () => {
    for (const r of runs.slice(1)) {
      const firstTrial = r.events.findIndex((e) => e.type === 'trial:start');
      const ready = r.events.findIndex(
        (e) =>
          e.type === 'service:ready' ||
          (e.type === 'log' && /^resume: the service is (healthy|back)/.test(String(e.message))),
      );
      expect(ready, r.stderr.slice(-2000)).toBeGreaterThanOrEqual(0);
      expect(ready).toBeLessThan(firstTrial === -1 ? Infinity : firstTrial);
    }
    const afterLoop = runs[3].events;
    expect(afterLoop.some((e) => e.type === 'service:action' && e.action === 'rollback')).toBe(true);
    const result = JSON.parse(runs[runs.length - 1].stdout) as { best: { config: { speculative_num_steps: number } } };
    expect(readStepsInForce(host, UNIT)).toBe(result.best.config.speculative_num_steps);
    expect((await fetch(`http://${host.ip}:${PORT}/health`)).status).toBe(200);
  });
});
