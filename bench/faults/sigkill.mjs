// Fault: SIGKILL of `spectune tune` at random points of a real campaign (issue 11, item 1). A simulated SGLang unit
// runs under systemd on a fault host of our own; the CLI is killed at seeded-random points spread over deploy,
// restart, readiness, benchmark, rollback and store write (each kill classed by the last progress event seen), then
// run again with --resume, as an operator would. Checked after every kill: the resumed run puts the service on its
// known-good config before the campaign goes on (drop-in = the kept known-good version, systemd reloaded, unit
// active, health 200, a config the store measured); at the end: the campaign finished, trial numbers contiguous, no
// finished trial repeated, every interrupted trial recorded as such and redone, the service on the winner.
import {
  acquireFaultHost,
  checkTrials,
  classify,
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

export const fault = 'sigkill';
export const describe = 'SIGKILL of spectune tune at random points of a campaign, then tune --resume';

const UNIT = 'spectune-fault-sigkill.service';
const PORT = 31711;
/** Where a kill lands, and how long after the first event of that class it may wait (ms, uniform). */
const CLASSES = { deploy: 400, restart: 800, readiness: 2500, benchmark: 3500, rollback: 2500, 'store write': 5 };
/** Runs of one campaign before we give up on it (a campaign that never finishes is a failure, not a hang). */
const MAX_RUNS_PER_CAMPAIGN = 40;

// One run of the CLI with a planned kill: at the `skip`-th entry into class `target` (or later), after `delayMs`.
// Also pauses the run (SIGSTOP) once when the resumed campaign is about to go on, to read the unit's state.
function plannedRun(h, config, resume, plan, onGoOn) {
  let cls = null;
  let entries = 0;
  let armed = false;
  let killedIn = null;
  let checked = !resume;
  let resumedLog = false;
  const run = runCli(tuneArgs(h, config, resume), {}, (e, child) => {
    const prev = cls;
    const k = classify(e, cls);
    if (k) cls = k;
    if (e.type === 'log' && /^resuming campaign/.test(e.message)) resumedLog = true;
    // The campaign goes on: the resume's reconcile said healthy, or its rollback's restart was ready, or a trial starts.
    const goesOn =
      (e.type === 'log' && /^resume: the service is (healthy|back)/.test(e.message)) ||
      (resumedLog && e.type === 'service:ready') ||
      e.type === 'trial:start';
    if (!checked && goesOn && !armed) {
      checked = true;
      child.kill('SIGSTOP');
      try {
        onGoOn();
      } finally {
        child.kill('SIGCONT');
      }
    }
    if (plan && !armed && k === plan.target && prev !== plan.target && ++entries > plan.skip) {
      armed = true;
      setTimeout(() => {
        killedIn = cls;
        child.kill('SIGKILL');
      }, plan.delayMs);
    }
  });
  return run.then((r) => ({ ...r, killedIn, checked }));
}

// Run the fault: `kills` SIGKILLs over as many campaigns as it takes.
export async function run({ short, log }) {
  const why = whyNotRunnable();
  if (why) return { trials: 0, recovered: 0, lost: 0, stateAfter: why, pass: false };
  const kills = short ? 4 : 20;
  const seed = Number(process.env.SPECTUNE_FAULT_SEED || 11);
  const rand = seededRandom(seed);
  const names = Object.keys(CLASSES);
  // every class in turn, each round in a seeded-random order, so the kill points spread over all of them
  const targets = [];
  while (targets.length < kills + MAX_RUNS_PER_CAMPAIGN) {
    const round = [...names];
    for (let i = round.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [round[i], round[j]] = [round[j], round[i]];
    }
    targets.push(...round);
  }
  const host = acquireFaultHost();
  const spread = Object.fromEntries(names.map((n) => [n, 0]));
  const failures = [];
  let done = 0;
  let recovered = 0;
  let lost = 0;
  let campaigns = 0;
  try {
    while (done < kills) {
      campaigns += 1;
      installSimUnit(host, UNIT, PORT);
      const { dir, config } = writeTuneConfig(host, UNIT, PORT, { trials: short ? 3 : 12 });
      let resume = false;
      let pendingCheck = 0;
      let finished = null;
      for (let runs = 0; runs < MAX_RUNS_PER_CAMPAIGN && !finished; runs++) {
        const target = targets[done];
        const plan =
          done < kills ? { target, skip: Math.floor(rand() * 2), delayMs: Math.floor(rand() * CLASSES[target]) } : null;
        let goOnProblems = null;
        const r = await plannedRun(host, config, resume, plan, () => {
          const s = readUnitState(host, UNIT);
          const measured = new Set(
            readTrials(dir)
              .filter((t) => t.state === 'measured')
              .map((t) => JSON.parse(t.params).speculative_num_steps),
          );
          goOnProblems = knownGoodProblems(s);
          if (s.good === null || s.good === 'none') measured.add(START_STEPS); // the operator's own unit, no drop-in
          if (!measured.has(s.steps))
            goOnProblems.push(
              `steps=${s.steps} in force is not a config the store measured (${[...measured].join(',')})`,
            );
        });
        if (goOnProblems !== null && pendingCheck > 0) {
          // every kill since the last time the campaign went on is judged by this run's service state
          if (goOnProblems.length === 0) recovered += pendingCheck;
          else failures.push(`campaign ${campaigns} run ${runs + 1}: before going on: ${goOnProblems.join('; ')}`);
          pendingCheck = 0;
        }
        if (r.signal === 'SIGKILL') {
          done += 1;
          pendingCheck += 1;
          spread[r.killedIn ?? 'deploy'] = (spread[r.killedIn ?? 'deploy'] ?? 0) + 1;
          log(`kill ${done}/${kills}: planned ${plan.target} (+${plan.delayMs} ms), landed in ${r.killedIn}`);
          resume = true;
          continue;
        }
        if (r.code !== 0 || r.result?.status !== 'done') {
          failures.push(
            `campaign ${campaigns} run ${runs + 1}: exit ${r.code}: ${r.stderr.trim().split('\n').slice(-2).join(' | ').slice(0, 300)}`,
          );
          break;
        }
        finished = r.result;
      }
      if (pendingCheck > 0)
        failures.push(`campaign ${campaigns}: ${pendingCheck} kill(s) never followed by a run that went on`);
      const problems = checkTrials(readTrials(dir));
      if (finished) {
        const s = readUnitState(host, UNIT);
        const best = finished.best?.config?.speculative_num_steps;
        if (s.steps !== best) problems.push(`ended on steps=${s.steps}, not the winner ${best}`);
        problems.push(...knownGoodProblems(s));
        if ((await healthCode(host, PORT)) !== 200) problems.push('health endpoint not 200 at the end');
      } else {
        problems.push('campaign did not finish');
      }
      if (problems.length) {
        lost += problems.filter((p) => /never redone|not contiguous|repeats/.test(p)).length;
        failures.push(...problems.map((p) => `campaign ${campaigns}: ${p}`));
      }
      removeDir(dir);
      if (failures.length) break;
    }
  } finally {
    removeSimUnit(host, UNIT);
  }
  const spreadText = Object.entries(spread)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
  return {
    trials: done,
    recovered: Math.min(recovered, done),
    lost,
    stateAfter: failures.length
      ? `NOT known-good: ${failures[0]}`.slice(0, 200)
      : `known-good ${recovered}/${done}, ended on the winner (${campaigns} campaign${campaigns > 1 ? 's' : ''})`,
    notes: `seed ${seed}; kill points: ${spreadText}${failures.length > 1 ? `; also: ${failures.slice(1, 4).join('; ')}` : ''}`,
    pass: failures.length === 0 && done === kills && recovered === done && lost === 0,
  };
}
