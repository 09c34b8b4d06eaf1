// Fault: the service host rebooted in the middle of a trial (issue 11, item 3). The fault host (our own, never
// th1..th3) is rebooted with scripts/testhost/reboot-host.sh while `spectune tune` runs: an orderly reboot (its
// systemd shuts down) or a power loss (every process SIGKILLed), its disk kept, the unit enabled so it starts at boot
// on whatever drop-in is on disk. spectune must stop cleanly (one-line error, no stack trace) or ride it out; then,
// as an operator would: `spectune status` reads the unit (what runs, which drop-in version, known-good), and
// `tune --resume` puts it back on the known-good config before going on (checked with spectune paused) and finishes
// with no trial lost or repeated, the service on the winner.
import { spawn } from 'node:child_process';
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
  ROOT,
} from './_support.mjs';

export const fault = 'reboot';
export const describe =
  'service host rebooted (orderly or power loss) in the middle of a trial, then status and tune --resume';

const UNIT = 'spectune-fault-reboot.service';
const PORT = 31713;
/** The trial parts a reboot starts in, and how long after entering one it may wait (ms, uniform). */
const CLASSES = { deploy: 300, restart: 500, readiness: 2000, benchmark: 2500 };

// Reboot the host without blocking this process (spectune's progress pipe must keep flowing meanwhile).
function rebootAsync(h, hard) {
  return new Promise((done) => {
    const t0 = Date.now();
    const args = [`${ROOT}/scripts/testhost/reboot-host.sh`, h.name, ...(hard ? ['--hard'] : [])];
    const p = spawn('bash', args, {
      env: { ...process.env, TESTHOST_SSH_CONFIG: h.sshConfig },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    p.stderr.on('data', (d) => {
      err += d;
    });
    p.on('close', (code) =>
      done({ ok: code === 0, seconds: (Date.now() - t0) / 1000, err: err.trim().split('\n').slice(-2).join(' | ') }),
    );
  });
}

// A clean stop: exit 1, the error said in a line or two, no stack trace among the non-JSON lines.
function cleanStop(r) {
  const text = r.stderr.split('\n').filter((l) => l.trim() && !l.startsWith('{'));
  return {
    ok: r.code === 1 && !text.some((l) => /^\s+at\s/.test(l)) && text.length <= 3,
    said: text.join(' | ').slice(0, 240),
  };
}

// Run the fault.
export async function run({ short, log }) {
  const why = whyNotRunnable();
  if (why) return { trials: 0, recovered: 0, lost: 0, stateAfter: why, pass: false };
  const reboots = short ? 1 : 4;
  const seed = Number(process.env.SPECTUNE_FAULT_SEED || 11) + 2;
  const rand = seededRandom(seed);
  const names = Object.keys(CLASSES);
  const host = acquireFaultHost();
  const failures = [];
  const seen = [];
  let recovered = 0;
  let done = 0;
  let lost = 0;
  try {
    installSimUnit(host, UNIT, PORT);
    const { dir, config } = writeTuneConfig(host, UNIT, PORT, { trials: short ? 1 : 8 });
    let resume = false;
    let finished = null;
    for (let runs = 0; runs < 3 * reboots + 3 && !finished && failures.length === 0; runs++) {
      const plan =
        done < reboots
          ? {
              target: names[Math.floor(rand() * names.length)],
              delayMs: Math.floor(rand() * 2000),
              hard: done % 2 === 1,
            }
          : null;
      let cls = null;
      let armed = false;
      let reboot = Promise.resolve(null);
      let checked = !resume;
      let goOn = null;
      let inTrial = false;
      let exited = false;
      const r = await runCli(tuneArgs(host, config, resume), {}, (e, child) => {
        const prev = cls;
        const k = classify(e, cls);
        if (k) cls = k;
        if (e.type === 'trial:start') inTrial = true;
        if (
          !checked &&
          (e.type === 'trial:start' || (e.type === 'log' && /^resume: the service is (healthy|back)/.test(e.message)))
        ) {
          checked = true;
          child.kill('SIGSTOP');
          try {
            const s = readUnitState(host, UNIT);
            const ok = new Set(
              readTrials(dir)
                .filter((t) => t.state === 'measured')
                .map((t) => JSON.parse(t.params).speculative_num_steps),
            );
            if (s.good === null || s.good === 'none') ok.add(START_STEPS);
            goOn = knownGoodProblems(s);
            if (!ok.has(s.steps)) goOn.push(`steps=${s.steps} in force is not a config the store measured`);
          } catch (err) {
            goOn = [`could not read the unit: ${err.message.split('\n')[0]}`];
          } finally {
            child.kill('SIGCONT');
          }
        }
        // a reboot lands inside a trial (after this run's first trial:start), never after the run has ended
        if (plan && !armed && inTrial && k === plan.target && prev !== plan.target && (e.trial ?? 2) >= 2) {
          armed = true;
          reboot = new Promise((res) =>
            setTimeout(() => {
              if (exited) {
                res(null);
                return;
              }
              seen.push(cls);
              res(rebootAsync(host, plan.hard));
            }, plan.delayMs),
          );
        }
      });
      exited = true;
      const rb = await reboot;
      if (goOn?.length) failures.push(`resume went on from a state not known-good: ${goOn.join('; ')}`);
      if (goOn !== null && !goOn.length && resume) recovered += 1;
      if (rb) {
        done += 1;
        const what = `reboot ${done}/${reboots} (${plan.hard ? 'power loss' : 'orderly'}, ${rb.seconds.toFixed(1)} s) in ${seen[seen.length - 1]}`;
        if (!rb.ok) {
          failures.push(`${what}: the host did not come back: ${rb.err}`);
          break;
        }
        if (r.code !== 0) {
          const stop = cleanStop(r);
          if (!stop.ok) failures.push(`${what}: not a clean stop (exit ${r.code}): ${stop.said}`);
          log(`${what}: spectune stopped (${stop.said})`);
        } else {
          recovered += 1;
          log(`${what}: the run rode it out`);
        }
        // the operator's first look after the reboot: status must read the unit, whatever state it is in
        const st = await runCli(['status', '-c', config, '--json', '--ssh-config', host.sshConfig], {});
        let status = null;
        try {
          status = JSON.parse(st.stdout);
        } catch {
          /* checked below */
        }
        if (!status?.state?.activeState || !status.versions)
          failures.push(`${what}: spectune status did not read the unit (exit ${st.code}): ${st.stderr.slice(0, 200)}`);
        else
          log(
            `status after the reboot: ${status.state.activeState}/${status.state.subState}, drop-in version ${status.versions.current} (known-good ${status.versions.good}), health ${status.health.ok ? 'ok' : 'not ok'}`,
          );
      }
      if (r.code === 0 && r.result?.status === 'done') finished = r.result;
      resume = true;
    }
    const problems = checkTrials(readTrials(dir));
    if (finished) {
      const s = readUnitState(host, UNIT);
      const best = finished.best?.config?.speculative_num_steps ?? START_STEPS;
      if (s.steps !== best) problems.push(`ended on steps=${s.steps}, not the winner ${best}`);
      problems.push(...knownGoodProblems(s));
      if ((await healthCode(host, PORT)) !== 200) problems.push('health endpoint not 200 at the end');
    } else if (!failures.length) problems.push('campaign did not finish');
    failures.push(...problems);
    lost = problems.filter((p) => /never redone|not contiguous|repeats/.test(p)).length;
    removeDir(dir);
  } catch (e) {
    failures.unshift(`error: ${e.message.split('\n')[0]}`);
  } finally {
    try {
      removeSimUnit(host, UNIT);
    } catch (e) {
      failures.push(`cleanup: ${e.message.split('\n')[0]}`);
    }
  }
  return {
    trials: done,
    recovered: Math.min(recovered, done),
    lost,
    stateAfter: failures.length
      ? `FAILED: ${failures[0]}`.slice(0, 200)
      : `known-good after ${done}/${done} reboots, ended on the winner`,
    notes: `seed ${seed}; reboots in: ${seen.join(', ')}${failures.length > 1 ? `; also: ${failures.slice(1, 4).join('; ')}` : ''}`,
    pass: failures.length === 0 && done === reboots && recovered === done && lost === 0,
  };
}
