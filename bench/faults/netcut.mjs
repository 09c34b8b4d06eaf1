// Fault: the network to the service host cut for 5-60 s at random points of a trial (issue 11, item 2). The fault
// host's veth is cut from this machine in one of two ways (seeded): "blackhole" takes the host's end down, so this
// machine's packets vanish silently (like a dead switch port: TCP waits, ssh's keepalive gives up after 45 s);
// "unreachable" takes this machine's end down, so connects fail at once (no route). When the network comes back,
// spectune is paused (SIGSTOP) and the drop-in on the host must be a whole kept version or none, never half-applied.
// Every cut must end in one of: absorbed (the trial went on), the trial marked interrupted and redone, or the CLI
// stopping cleanly (one-line error, no stack trace, state saved) and `tune --resume` going on from a known-good
// config. No trial may be blamed on the cut (recorded failed without the engine's own failure), none lost.
import { spawnSync } from 'node:child_process';
import {
  acquireFaultHost,
  checkTrials,
  classify,
  dropInWhole,
  healthCode,
  installSimUnit,
  knownGoodProblems,
  readTrials,
  readUnitState,
  removeDir,
  removeSimUnit,
  runCli,
  seededRandom,
  START_STEPS,
  tuneArgs,
  whyNotRunnable,
  writeTuneConfig,
} from './_support.mjs';

export const fault = 'netcut';
export const describe = 'network to the service host cut for 5-60 s at random points of a trial';

const UNIT = 'spectune-fault-netcut.service';
const PORT = 31712;
/** The trial parts a cut starts in, and how long after entering one it may wait (ms, uniform). */
const CLASSES = { deploy: 300, restart: 500, readiness: 2000, benchmark: 300 };
const MAX_RUNS_PER_CAMPAIGN = 30;
/** A failure that is the engine's own (the sim's memory boundary), not the network's. */
const ENGINE_FAILURE = /Not enough memory|out of memory|crash loop/i;

// Cut or restore the fault host's network (see the file comment for the two ways).
function setLink(h, mode, up) {
  const argv =
    mode === 'blackhole'
      ? ['-n', h.netns, 'link', 'set', 'eth0', up ? 'up' : 'down']
      : ['link', 'set', h.veth, up ? 'up' : 'down'];
  const r = spawnSync('ip', argv, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ip ${argv.join(' ')}: ${r.stderr.trim()}`);
}

// Wait until the host answers ssh again after a restore (neighbour discovery takes a moment).
async function waitReachable(h) {
  for (let i = 0; i < 50; i++) {
    if (spawnSync('ssh', ['-F', h.sshConfig, '-o', 'ConnectTimeout=2', h.name, 'true']).status === 0) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}

// One CLI run with cuts, one after the other: `nextCut()` plans the next (null: no more); each cut starts on entering
// its class (after its delay), and when it ends spectune is paused while `onRestored(state, cut)` reads the host.
// Resolves after the run ended AND the network is back; `cuts` lists the cuts made with when they started.
function cutRun(h, unit, config, resume, nextCut, onRestored) {
  let cls = null;
  let cut = nextCut();
  let armed = false;
  let restored = Promise.resolve();
  let child = null;
  let exited = false;
  let trial = 0;
  const made = [];
  const run = runCli(tuneArgs(h, config, resume), {}, (e, c) => {
    child = c;
    const prev = cls;
    const k = classify(e, cls);
    if (k) cls = k;
    if (e.type === 'trial:start') trial = e.trial;
    // cuts land in search trials (from trial 2): the baseline is the reference everything is compared with
    if (cut && !armed && trial >= 2 && k === cut.target && prev !== cut.target) {
      armed = true;
      const plan = cut;
      restored = new Promise((done) =>
        setTimeout(() => {
          if (exited) {
            done();
            return;
          }
          made.push({ ...plan, cutIn: cls, atMs: Date.now() });
          setLink(h, plan.mode, false);
          setTimeout(async () => {
            if (!exited) child.kill('SIGSTOP');
            try {
              setLink(h, plan.mode, true);
              await waitReachable(h);
              onRestored(readUnitState(h, unit), plan);
            } finally {
              if (!exited) child.kill('SIGCONT');
              cut = nextCut();
              armed = false;
              done();
            }
          }, plan.seconds * 1000);
        }, plan.delayMs),
      );
    }
  });
  return run.then(async (r) => {
    exited = true;
    await restored;
    return { ...r, cuts: made };
  });
}

// A clean stop: exit 1, the error said in one line, no stack trace among the non-JSON lines.
function cleanStop(r) {
  const text = r.stderr.split('\n').filter((l) => l.trim() && !l.startsWith('{'));
  const stack = text.some((l) => /^\s+at\s/.test(l));
  return { ok: r.code === 1 && !stack && text.length <= 3, said: text.join(' | ').slice(0, 240) };
}

// Run the fault.
export async function run({ short, log }) {
  const why = whyNotRunnable();
  if (why) return { trials: 0, recovered: 0, lost: 0, stateAfter: why, pass: false };
  const cuts = short ? 3 : 10;
  const seed = Number(process.env.SPECTUNE_FAULT_SEED || 11) + 1;
  const rand = seededRandom(seed);
  const names = Object.keys(CLASSES);
  // every class in turn (each round in a seeded order; the benchmark first, where a cut can fail a trial), the two
  // ways of cutting alternating, durations seeded: 5-60 s (short: 5-7 s, the benchmark cut 12 s)
  const schedule = [];
  while (schedule.length < cuts + MAX_RUNS_PER_CAMPAIGN) {
    const round = names.filter((n) => n !== 'benchmark');
    for (let i = round.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [round[i], round[j]] = [round[j], round[i]];
    }
    for (const target of ['benchmark', ...round]) {
      // short: the benchmark cut outlasts the 10 s stall timeout, so the trial is interrupted (not blamed) and redone
      const seconds = short ? (target === 'benchmark' ? 12 : 5 + Math.floor(rand() * 3)) : 5 + Math.floor(rand() * 56);
      schedule.push({
        target,
        seconds,
        delayMs: Math.floor(rand() * CLASSES[target]),
        mode: schedule.length % 2 ? 'unreachable' : 'blackhole',
      });
    }
  }
  const host = acquireFaultHost();
  const outcomes = { absorbed: 0, 'interrupted+redone': 0, 'stopped+resumed': 0 };
  const failures = [];
  let done = 0;
  let recovered = 0;
  let lost = 0;
  let campaigns = 0;
  let maxS = 0;
  try {
    while (done < cuts && failures.length === 0) {
      campaigns += 1;
      installSimUnit(host, UNIT, PORT);
      const { dir, config } = writeTuneConfig(host, UNIT, PORT, { trials: short ? 2 : 10 });
      let resume = false;
      let finished = null;
      let pending = null;
      for (let runs = 0; runs < MAX_RUNS_PER_CAMPAIGN && !finished && failures.length === 0; runs++) {
        let planned = done;
        const nextCut = () => (planned < cuts ? schedule[planned++] : null);
        const halfApplied = [];
        const r = await cutRun(host, UNIT, config, resume, nextCut, (s, plan) => {
          if (!dropInWhole(host, UNIT, s) || s.tempFiles) halfApplied.push(plan);
        });
        if (pending) {
          // the previous run stopped on a cut: this resumed run must have gone on (its checks are the campaign's)
          if (r.code === 0 || r.events.some((e) => e.type === 'trial:start')) {
            recovered += 1;
            outcomes['stopped+resumed'] += 1;
          } else failures.push(`resume after cut ${pending} did not go on`);
          pending = null;
        }
        r.cuts.forEach((c, i) => {
          done += 1;
          maxS = Math.max(maxS, c.seconds);
          const what = `cut ${done}/${cuts}: ${c.mode} ${c.seconds}s in ${c.cutIn}`;
          const until = r.cuts[i + 1]?.atMs ?? Infinity;
          const within = (e) => e.type === 'trial:end' && e.ts >= c.atMs && e.ts < until;
          const skipped = r.events.filter((e) => within(e) && e.status === 'skipped').length;
          const blamed = r.events.filter(
            (e) => within(e) && e.status === 'failed' && !ENGINE_FAILURE.test(JSON.stringify(e.verdict ?? '')),
          );
          const bad = [];
          if (halfApplied.includes(c)) bad.push('drop-in half-applied after the cut');
          if (blamed.length)
            bad.push(`trial ${blamed.map((e) => e.trial).join(',')} recorded failed because of the cut`);
          failures.push(...bad.map((b) => `${what}: ${b}`));
          const last = i === r.cuts.length - 1;
          if (last && r.code !== 0) {
            const stop = cleanStop(r);
            if (!stop.ok) failures.push(`${what}: not a clean stop (exit ${r.code}): ${stop.said}`);
            else if (!bad.length) pending = done;
            log(`${what}: spectune stopped (${stop.said}); resuming`);
          } else {
            if (!bad.length) {
              recovered += 1;
              outcomes[skipped ? 'interrupted+redone' : 'absorbed'] += 1;
            }
            log(`${what}: ${skipped ? 'trial interrupted and redone' : 'absorbed'}; the campaign went on`);
          }
        });
        if (r.code === 0) finished = r.result;
        else if (!r.cuts.length) failures.push(`run without a cut failed (exit ${r.code}): ${cleanStop(r).said}`);
        resume = true;
      }
      const problems = checkTrials(readTrials(dir));
      lost += problems.filter((p) => /never redone|not contiguous|repeats/.test(p)).length;
      if (finished) {
        const s = readUnitState(host, UNIT);
        const best = finished.best?.config?.speculative_num_steps ?? START_STEPS;
        if (s.steps !== best) problems.push(`ended on steps=${s.steps}, not the winner ${best}`);
        problems.push(...knownGoodProblems(s));
        if ((await healthCode(host, PORT)) !== 200) problems.push('health endpoint not 200 at the end');
      } else if (failures.length === 0) problems.push('campaign did not finish');
      failures.push(...problems.map((p) => `campaign ${campaigns}: ${p}`));
      removeDir(dir);
    }
  } finally {
    try {
      setLink(host, 'blackhole', true);
      setLink(host, 'unreachable', true);
    } catch {
      /* torn down below anyway */
    }
    removeSimUnit(host, UNIT);
  }
  return {
    trials: done,
    recovered: Math.min(recovered, done),
    lost,
    stateAfter: failures.length
      ? `FAILED: ${failures[0]}`.slice(0, 200)
      : `known-good; drop-in whole after ${done}/${done} cuts`,
    notes: `seed ${seed}; cuts up to ${maxS}s; ${Object.entries(outcomes)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}${failures.length > 1 ? `; also: ${failures.slice(1, 4).join('; ')}` : ''}`,
    pass: failures.length === 0 && done === cuts && recovered === done && lost === 0,
  };
}
