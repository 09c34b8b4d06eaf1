// A model on two hosts stays one (issue 25, parts 2 and 3): rank0 on th1, rank1 on th2, the SIMULATED two-node
// SGLang under real systemd. rank1 is cut off (spectune's ssh path to it and the rank-to-rank link) during a trial
// for 30 s (retried: the campaign goes on) and for 3 minutes (past the 60 s lease: rank0 goes back to known-good,
// rank1's own lease does the same on th2, then --resume sees a healthy group and restarts nothing), and during a
// resume's own rollback. A resume of a healthy group restarts nothing. Every test ends with both ranks checked on
// their hosts: the same known-good config (byte-equal to the kept copy, equal but for the rank flags), active, healthy.
import { afterEach, describe, expect, it } from 'vitest';
import {
  cutRank1,
  groupProblems,
  readRank,
  runCliWatched,
  settledGroupProblems,
  startCutGroup,
  stopCutGroup,
  type CutGroup,
} from './group-safe-support.js';

const UNIT = 'spectune-group-safe-e2e.service';
const PORT = 31751;
/** rank0's dist-init port; rank1 reaches it through the relay on this machine. */
const DIST_PORT = 31752;
const SECOND = 1000;

type Ev = Record<string, unknown>;
const tuneArgs = (g: CutGroup, resume = false) => [
  'tune',
  '-c',
  g.config,
  '--json',
  '--ssh-config',
  g.path.sshConfig,
  ...(resume ? ['--resume'] : []),
];
// rank0's deploy of the first search trial: rank0 changes, rank1 is next (the issue's cut).
const isRank0DeployOfSearchTrial = (trial: { n: number }) => (e: Ev) => {
  if (e.type === 'trial:start') trial.n = Number(e.trial);
  return trial.n >= 2 && e.type === 'service:action' && e.action === 'deploy' && e.host === 'th1';
};
const logs = (events: Ev[]) => events.filter((e) => e.type === 'log').map((e) => String(e.message));
const oneLineError = (stderr: string) => stderr.split('\n').filter((l) => l.trim() && !l.startsWith('{'));

/** The long cases (a 3-minute cut, ~510 s; a cut during resume, ~370 s) run with SPECTUNE_E2E_LONG=1, not in CI. */
const LONG = process.env.SPECTUNE_E2E_LONG === '1';

describe('a two-rank group stays one through network cuts and resumes', () => {
  let g: CutGroup | undefined;
  afterEach(async () => {
    await stopCutGroup(g, UNIT);
    g = undefined;
  });

  it('a 30 s cut of rank1 during a trial is retried within the lease and the campaign goes on', async () => {
    g = await startCutGroup(UNIT, PORT, DIST_PORT);
    const group = g;
    const trial = { n: 0 };
    let cut: Promise<void> | null = null;
    const hit = isRank0DeployOfSearchTrial(trial);
    const run = await runCliWatched(tuneArgs(group), (e) => {
      if (!cut && hit(e)) cut = cutRank1(group, 30 * SECOND);
    });
    await cut;
    expect(cut, 'the cut happened').not.toBeNull();
    expect(run.code, run.stderr.slice(-3000)).toBe(0);
    const said = logs(run.events);
    expect(
      said.some((m) => /th2.*during the group change/.test(m)),
      said.join('\n'),
    ).toBe(true);
    expect(said.some((m) => /every rank answers again: retrying/.test(m))).toBe(true);
    const result = JSON.parse(run.stdout) as { status: string; trials: { status: string }[] };
    expect(result.status).toBe('done');
    expect(result.trials.filter((t) => t.status === 'failed')).toEqual([]);
    expect(await settledGroupProblems(group, UNIT, PORT, 30 * SECOND)).toEqual([]);
  }, 420_000);

  it.runIf(LONG)(
    'a 3 minute cut: rank0 goes back to known-good, rank1 by its own lease; --resume then restarts nothing',
    async () => {
      g = await startCutGroup(UNIT, PORT, DIST_PORT);
      const group = g;
      const trial = { n: 0 };
      let cut: Promise<void> | null = null;
      const hit = isRank0DeployOfSearchTrial(trial);
      const run = await runCliWatched(tuneArgs(group), (e) => {
        if (!cut && hit(e)) cut = cutRank1(group, 180 * SECOND);
      });
      // spectune gave up within the lease and said so in one line; rank0 is already back on known-good while th2 is cut
      expect(run.code, run.stderr.slice(-3000)).toBe(1);
      const err = oneLineError(run.stderr);
      expect(err.join('\n')).toMatch(
        /th2 \(rank1\) lost during the group change .* not back within the lease \(60 s\)/,
      );
      expect(err.some((l) => /^\s+at\s/.test(l))).toBe(false);
      const r0 = readRank(group.rank0, UNIT);
      expect({ trial: r0.trial, onGood: r0.current === r0.good, sameText: r0.dropIn === r0.goodText }).toEqual({
        trial: false,
        onGood: true,
        sameText: true,
      });
      await cut;
      // rank1's host-side lease restored known-good on th2 (if the candidate ever got there); the group forms again
      expect(await settledGroupProblems(group, UNIT, PORT, 90 * SECOND)).toEqual([]);
      const before = [readRank(group.rank0, UNIT), readRank(group.rank1, UNIT)];
      let during: ReturnType<typeof readRank>[] | null = null;
      const resumed = await runCliWatched(tuneArgs(group, true), (e, child) => {
        // the first trial of the resumed run: nothing may have been restarted before it
        if (!during && e.type === 'trial:start') {
          child.kill('SIGSTOP');
          try {
            during = [readRank(group.rank0, UNIT), readRank(group.rank1, UNIT)];
          } finally {
            child.kill('SIGCONT');
          }
        }
      });
      expect(resumed.code, resumed.stderr.slice(-3000)).toBe(0);
      expect(during).not.toBeNull();
      expect(during!.map((s) => [s.mainPid, s.nRestarts])).toEqual(before.map((s) => [s.mainPid, s.nRestarts]));
      expect(
        logs(resumed.events).some((m) =>
          /already runs its known-good config and the group is healthy .*not restarted/.test(m),
        ),
      ).toBe(true);
      expect(await settledGroupProblems(group, UNIT, PORT, 30 * SECOND)).toEqual([]);
    },
    600_000,
  );

  it.runIf(LONG)(
    "a 30 s cut during a resume's own rollback is retried; healthy ranks are never stopped for it",
    async () => {
      g = await startCutGroup(UNIT, PORT, DIST_PORT);
      const group = g;
      // spectune killed while the candidate of the first search trial runs provisionally on both ranks
      let seen = 0;
      const killed = await runCliWatched(tuneArgs(group), (e, child) => {
        if (e.type === 'trial:start') seen = Number(e.trial);
        if (seen >= 2 && e.type === 'trial:phase' && e.phase === 'warmup') child.kill('SIGKILL');
      });
      expect(killed.signal).toBe('SIGKILL');
      expect([readRank(group.rank0, UNIT).trial, readRank(group.rank1, UNIT).trial]).toEqual([true, true]);
      let cut: Promise<void> | null = null;
      const resumed = await runCliWatched(tuneArgs(group, true), (e) => {
        if (!cut && e.type === 'service:action' && e.action === 'rollback' && e.host === 'th1')
          cut = cutRank1(group, 30 * SECOND);
      });
      await cut;
      expect(cut, 'the cut happened').not.toBeNull();
      expect(resumed.code, resumed.stderr.slice(-3000)).toBe(0);
      expect(resumed.stderr).not.toContain('rollback of the group failed');
      expect(await settledGroupProblems(group, UNIT, PORT, 30 * SECOND)).toEqual([]);
    },
    420_000,
  );

  it('a resume of a healthy group restarts neither rank (same MainPID and NRestarts on both)', async () => {
    g = await startCutGroup(UNIT, PORT, DIST_PORT, 2);
    const group = g;
    // killed during the baseline's benchmark: the trial is interrupted, the group still runs its own config, healthy
    const killed = await runCliWatched(tuneArgs(group), (e, child) => {
      if (e.type === 'trial:phase' && e.phase === 'bench') child.kill('SIGKILL');
    });
    expect(killed.signal).toBe('SIGKILL');
    expect(await groupProblems(group, UNIT, PORT)).toEqual([]);
    const before = [readRank(group.rank0, UNIT), readRank(group.rank1, UNIT)];
    let during: ReturnType<typeof readRank>[] | null = null;
    const resumed = await runCliWatched(tuneArgs(group, true), (e, child) => {
      if (!during && e.type === 'trial:start') {
        child.kill('SIGSTOP');
        try {
          during = [readRank(group.rank0, UNIT), readRank(group.rank1, UNIT)];
        } finally {
          child.kill('SIGCONT');
        }
      }
    });
    expect(resumed.code, resumed.stderr.slice(-3000)).toBe(0);
    expect(during!.map((s) => [s.mainPid, s.nRestarts])).toEqual(before.map((s) => [s.mainPid, s.nRestarts]));
    const firstTrial = resumed.events.findIndex((e) => e.type === 'trial:start');
    expect(resumed.events.slice(0, firstTrial).filter((e) => e.type === 'service:action')).toEqual([]);
    expect(await settledGroupProblems(group, UNIT, PORT, 30 * SECOND)).toEqual([]);
  }, 300_000);
});
