// Fault: spectune left dead with NO `--resume` (issue 19). A fresh `spectune tune --lease 15s` runs on a simulated
// SGLang unit of a fault host of our own, and at a seeded-random point of a candidate's trial (deploy, restart,
// readiness, benchmark, confirm) it is ended one of five ways: SIGKILL; SIGHUP (a closed terminal); SIGTERM; a double
// SIGINT (the second 0.3 s after the first: "rolling back, press Ctrl-C again to leave the host to its lease"), in
// half of them a third that exits at once; or the network to the host cut (netcut.mjs's two ways), spectune then
// killed (blackhole) or left to fail on its own (unreachable). Nobody runs --resume. From the moment it ends, the
// host is read every second over ssh through its own loopback (inside its network namespace, so reads work during a
// cut) until it is on known-good byte for byte: no /run candidate, the /etc drop-in = the kept known-good version
// (or none), current = good, NeedDaemonReload=no, the unit active, health 200 and ExecStart on the known-good flags,
// a config the store measured; and its host lock gone. Deadline: the lease + the timer's period + a margin. Then the
// next `tune` (the next trial's run; an `apply` after the last) must run without --break-lock.
import { spawnSync } from 'node:child_process';
import {
  acquireFaultHost,
  classify,
  readTrials,
  removeDir,
  removeSimUnit,
  installSimUnit,
  runCli,
  seededRandom,
  START_STEPS,
  whyNotRunnable,
} from './_support.mjs';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const fault = 'abandon';
export const describe =
  'tune ended by SIGKILL, SIGHUP, SIGTERM, a double SIGINT or a network cut mid-trial, no --resume: the host returns to known-good within the lease';

const UNIT = 'spectune-fault-abandon.service';
const PORT = 31751;
const LEASE_S = 15;
/** The host's lease timer looks every 5 s; the margin covers a restart of the unit and a loaded machine. */
const DEADLINE_MS = (LEASE_S + 5 + 15) * 1000;
const KINDS = ['SIGKILL', 'SIGHUP', 'SIGTERM', 'SIGINT x2', 'netcut'];
/** The trial parts an end lands in, and how long after entering one it may wait (ms, uniform). */
const POINTS = { deploy: 300, restart: 500, readiness: 1500, benchmark: 1500, confirm: 600 };

// A tune config for the unit (a small benchmark, so a candidate is reached quickly).
function writeConfig(h) {
  const dir = mkdtempSync(join(tmpdir(), 'spectune-faults-abandon-'));
  const config = join(dir, 'spectune.yaml');
  writeFileSync(
    config,
    [
      'target:',
      '  engine: sglang',
      `  endpoint: http://${h.ip}:${PORT}`,
      '  manager: systemd',
      '  hosts:',
      `    - host: ${h.name}`,
      `      unit: ${UNIT}`,
      'space:',
      '  speculative_num_steps: { min: 1, max: 10 }',
      'search: { strategy: adaptive, noiseMargin: 4%, repeats: 1 }',
      'objective: { metric: decodeTokensPerSec.mean, concurrency: 1 }',
      'benchmark: { concurrency: [1], requests: 3, inputTokens: 128, outputTokens: 128, warmup: 1, timeouts: { ready: 60s, firstToken: 20s, stall: 10s, total: 60s } }',
      'budget: { trials: 6, hours: 1h }',
      'store: ./tune.db',
      '',
    ].join('\n'),
  );
  return { dir, config };
}

// A shell script on the host over ssh through the host's own loopback: enters the host's network namespace, so it
// works while the host's link to this machine is cut (spectune's own connections stay cut).
function hostSh(h, script, timeout = 20_000) {
  const r = spawnSync(
    'ip',
    [
      'netns',
      'exec',
      h.netns,
      'ssh',
      '-F',
      h.sshConfig,
      '-o',
      'HostName=127.0.0.1',
      '-o',
      `HostKeyAlias=${h.name}`,
      '-o',
      'ConnectTimeout=3',
      h.name,
      script,
    ],
    { encoding: 'utf8', timeout },
  );
  return { ok: r.status === 0, out: r.stdout ?? '', err: r.stderr ?? '' };
}

// Everything the known-good check needs, in one ssh.
function readHost(h) {
  const st = `/var/lib/spectune/${UNIT}`;
  const etc = `/etc/systemd/system/${UNIT}.d/90-spectune.conf`;
  const run = `/run/systemd/system/${UNIT}.d/90-spectune.trial.conf`;
  const r = hostSh(
    h,
    [
      `g=$(cat ${st}/good 2>/dev/null || echo absent)`,
      'echo "good=$g"',
      `echo "current=$(cat ${st}/current 2>/dev/null || echo absent)"`,
      `echo "trial=$(test -e ${run} && echo present || echo absent)"`,
      `if [ "$g" = none ] || [ "$g" = absent ]; then test -e ${etc} && echo etc=extra || echo etc=same; else cmp -s ${st}/dropins/$g.conf ${etc} && echo etc=same || echo etc=differs; fi`,
      `echo "goodsteps=$( ( [ "$g" = none ] || [ "$g" = absent ] ) && echo ${START_STEPS} || grep -o -- '--speculative-num-steps[ =][0-9]*' ${st}/dropins/$g.conf | tail -1 | grep -o '[0-9]*$')"`,
      `echo "steps=$(systemctl show -p ExecStart --value ${UNIT} | grep -o -- '--speculative-num-steps[ =][0-9]*' | tail -1 | grep -o '[0-9]*$')"`,
      `echo "reload=$(systemctl show -p NeedDaemonReload --value ${UNIT})"`,
      `echo "active=$(systemctl is-active ${UNIT})"`,
      `echo "health=$(curl -s -o /dev/null -m 2 -w '%{http_code}' http://127.0.0.1:${PORT}/health)"`,
      `echo "lock=$(test -e ${st}/lock && echo held || echo free)"`,
    ].join('; '),
  );
  if (!r.ok) return { unreadable: r.err.trim().split('\n').pop() };
  return Object.fromEntries(
    r.out
      .trim()
      .split('\n')
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
}

// What keeps a read state from being known-good (empty: known-good). `measured`: steps the store measured ok.
function notKnownGood(s, measured) {
  if (s.unreadable) return [`host unreadable: ${s.unreadable}`];
  const p = [];
  if (s.trial !== 'absent') p.push('a /run candidate drop-in is still there');
  if (s.etc !== 'same')
    p.push(
      `the /etc drop-in ${s.etc === 'extra' ? 'exists with known-good none' : 'is not the kept known-good version'} (good=${s.good})`,
    );
  if (s.current !== s.good) p.push(`current ${s.current} is not good ${s.good}`);
  if (s.reload !== 'no') p.push(`NeedDaemonReload=${s.reload}`);
  if (s.active !== 'active') p.push(`unit ${s.active}`);
  if (s.health !== '200') p.push(`health ${s.health}`);
  if (s.steps !== s.goodsteps) p.push(`ExecStart has steps=${s.steps}, known-good has ${s.goodsteps}`);
  if (!measured.has(Number(s.goodsteps))) p.push(`known-good steps=${s.goodsteps} is not a config the store measured`);
  return p;
}

// Cut or restore the host's link (netcut.mjs's two ways: blackhole = the host's end down, unreachable = ours).
function setLink(h, mode, up) {
  const argv =
    mode === 'blackhole'
      ? ['-n', h.netns, 'link', 'set', 'eth0', up ? 'up' : 'down']
      : ['link', 'set', h.veth, up ? 'up' : 'down'];
  const r = spawnSync('ip', argv, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ip ${argv.join(' ')}: ${r.stderr.trim()}`);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// One victim run: a fresh `tune` (no --resume) ended as `plan` says at its point of a candidate's trial.
// Resolves with the CLI's outcome, when it was ended (deathAt), where, and what it said.
function victimRun(h, config, plan, cut, benched, onDeath) {
  let cls = null;
  let trial = 0;
  let candidate = false;
  let benchPhase = false;
  let armed = false;
  let endedIn = null;
  let deathAt = null;
  let lastEvent = null;
  let sawStart = false;
  let steps = null;
  const args = ['tune', '-c', config, '--json', '--ssh-config', h.sshConfig, '--lease', `${LEASE_S}s`];
  const run = runCli(args, {}, (e, child) => {
    const prev = cls;
    let k = classify(e, cls);
    if (e.type === 'trial:start') {
      trial = e.trial;
      sawStart = true;
      steps = e.config?.speculative_num_steps;
      candidate = e.config?.speculative_num_steps !== START_STEPS && trial >= 2;
    }
    if (e.type === 'trial:phase') benchPhase = e.phase === 'bench';
    // the candidate is measured: markGood (the confirm: /run -> /etc, good marker) runs next
    if (e.type === 'bench:level' && benchPhase) {
      k = 'confirm';
      benched.add(steps);
    }
    if (k) cls = k;
    lastEvent =
      e.type === 'trial:phase' ? `phase ${e.phase}` : e.type === 'service:action' ? `action ${e.action}` : e.type;
    if (armed || !candidate || k !== plan.point || prev === plan.point) return;
    armed = true;
    setTimeout(() => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      endedIn = `${cls} (${lastEvent})`;
      deathAt = Date.now();
      end(child, plan, cut);
      onDeath(deathAt);
    }, plan.delayMs);
  });
  return run.then((r) => ({ ...r, endedIn, deathAt, sawStart }));
}

// End the run the way the plan says.
function end(child, plan, cut) {
  if (plan.kind === 'netcut') {
    setLink(cut.h, plan.mode, false);
    cut.active = true;
    // blackhole: spectune hangs on its connections, killed a few seconds later; unreachable: it fails on its own
    if (plan.mode === 'blackhole') setTimeout(() => child.kill('SIGKILL'), plan.killAfterMs);
    else setTimeout(() => child.kill('SIGKILL'), DEADLINE_MS); // it did not fail on its own: that is the finding
    return;
  }
  if (plan.kind === 'SIGINT x2') {
    child.kill('SIGINT');
    setTimeout(() => child.kill('SIGINT'), 300);
    if (plan.third) setTimeout(() => child.kill('SIGINT'), 300 + plan.thirdAfterMs);
    return;
  }
  child.kill(plan.kind);
}

// The host lease's journal lines since `sinceMs`.
function leaseJournal(h, sinceMs) {
  return hostSh(h, `journalctl -t spectune-lease --no-pager -o cat --since=@${Math.floor(sinceMs / 1000) - 1}`).out;
}

// Steps the store measured ok (plus the operator's own, and `benched`: candidates whose benchmark finished, which the
// confirm may make known-good before the store records them), i.e. configs allowed to be known-good.
function measuredSteps(dir, benched) {
  const s = new Set([START_STEPS, ...benched]);
  for (const t of readTrials(dir)) if (t.state === 'measured') s.add(JSON.parse(t.params).speculative_num_steps);
  return s;
}

// From the end on, read the host every second until it is known-good with no lock left, or the deadline; the
// first read that is known-good and unlocked is the recovery time (the lock stays while a live run rolls back).
async function pollUntilGood(h, dir, benched, deathAt) {
  while (Date.now() - deathAt < DEADLINE_MS) {
    const s = readHost(h);
    if (!notKnownGood(s, measuredSteps(dir, benched)).length && s.lock === 'free') return { goodAt: Date.now() };
    await sleep(1000);
  }
  return { goodAt: null };
}

// The unit fresh, with nothing of spectune's left (drop-ins, history, lock, lease, timer).
function resetUnit(h) {
  const base = UNIT.replace(/\.service$/, '');
  spawnSync(
    'ssh',
    [
      '-F',
      h.sshConfig,
      h.name,
      `systemctl stop spectune-lease-${base}.timer 2>/dev/null; systemctl reset-failed spectune-lease-${base}.timer spectune-lease-${base}.service 2>/dev/null; rm -rf /run/systemd/system/${UNIT}.d /run/spectune/${UNIT}; true`,
    ],
    { timeout: 60_000 },
  );
  installSimUnit(h, UNIT, PORT);
}

const median = (xs) => {
  const a = [...xs].sort((x, y) => x - y);
  return a.length ? a[Math.floor((a.length - 1) / 2)] : null;
};

// Run the fault.
export async function run({ short, log }) {
  const why = whyNotRunnable();
  if (why) return { trials: 0, recovered: 0, lost: 0, stateAfter: why, pass: false };
  const perKind = short ? 1 : 10;
  const seed = Number(process.env.SPECTUNE_FAULT_SEED || 11) + 19;
  const rand = seededRandom(seed);
  const points = Object.keys(POINTS);
  // rounds of one end of each kind in a seeded order; each kind's points go through every part of a trial in turn
  const nextPoint = Object.fromEntries(KINDS.map((k, i) => [k, i]));
  const schedule = [];
  for (let round = 0; round < perKind; round++) {
    const order = [...KINDS];
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [order[i], order[j]] = [order[j], order[i]];
    }
    for (const kind of order) {
      const point = points[nextPoint[kind]++ % points.length];
      schedule.push({
        kind,
        point,
        delayMs: Math.floor(rand() * POINTS[point]),
        third: kind === 'SIGINT x2' && round % 2 === 1,
        thirdAfterMs: 200 + Math.floor(rand() * 800),
        mode: kind === 'netcut' ? (round % 2 ? 'unreachable' : 'blackhole') : null,
        killAfterMs: 2000 + Math.floor(rand() * 6000),
      });
    }
  }
  const host = acquireFaultHost();
  const cut = { h: host, active: false };
  const stats = Object.fromEntries(KINDS.map((k) => [k, { trials: 0, recovered: 0, ms: [], how: {} }]));
  let pressAgain = 0;
  const failures = [];
  const { dir, config } = writeConfig(host);
  let nextRunProofs = 0;
  const benched = new Set();
  const t0 = Date.now();
  try {
    resetUnit(host);
    for (let i = 0; i < schedule.length; i++) {
      const plan = schedule[i];
      const st = stats[plan.kind];
      let r = null;
      let polled = null;
      for (let attempt = 0; attempt < 3 && !r?.deathAt; attempt++) {
        r = await victimRun(host, config, plan, cut, benched, (deathAt) => {
          polled = pollUntilGood(host, dir, benched, deathAt);
        });
        // this run is the "next tune" of the previous end: it must have taken the lock without --break-lock
        if (i > 0 && attempt === 0) {
          if (r.sawStart && !/E_LOCKED|is locked by|is in use by/.test(r.stderr)) nextRunProofs += 1;
          else
            failures.push(
              `${plan.kind} #${i + 1}: the next tune after the previous end did not run: ${r.stderr
                .split('\n')
                .filter((l) => l && !l.startsWith('{'))
                .slice(-2)
                .join(' | ')
                .slice(0, 240)}`,
            );
        }
        if (!r.deathAt)
          log(`${plan.kind} #${i + 1}: the run ended (exit ${r.code}) before reaching ${plan.point}; again`);
      }
      if (!r.deathAt) {
        failures.push(`${plan.kind} #${i + 1}: never reached ${plan.point} in 3 runs`);
        continue;
      }
      st.trials += 1;
      const { goodAt } = await polled;
      if (cut.active) {
        setLink(host, plan.mode, true);
        cut.active = false;
        for (
          let k = 0;
          k < 50 && spawnSync('ssh', ['-F', host.sshConfig, '-o', 'ConnectTimeout=2', host.name, 'true']).status !== 0;
          k++
        )
          await sleep(200);
      }
      const last = readHost(host);
      const bad = notKnownGood(last, measuredSteps(dir, benched));
      if (goodAt === null) bad.push(`not known-good and unlocked within ${DEADLINE_MS / 1000} s of the end`);
      if (last.lock !== 'free') bad.push("the dead run's host lock is still there");
      const journal = leaseJournal(host, r.deathAt);
      const ownRollback = r.events.some(
        (e) => e.type === 'service:action' && e.action === 'rollback' && e.ts >= r.deathAt,
      );
      const how = /candidate drop-in removed/.test(journal)
        ? 'lease restored known-good'
        : /was being confirmed/.test(journal)
          ? 'lease finished the confirm'
          : ownRollback
            ? 'own rollback'
            : /removed the lock/.test(journal)
              ? 'on known-good already, lease removed the lock'
              : 'on known-good already, lock released';
      const said = r.stderr.split('\n').filter((l) => l && !l.startsWith('{'));
      if (
        plan.kind === 'SIGINT x2' &&
        said.some((l) => l.includes('press Ctrl-C again to leave the host to its lease'))
      )
        pressAgain += 1;
      if (
        plan.kind === 'SIGINT x2' &&
        !said.some((l) => l.includes('rolling back, press Ctrl-C again to leave the host to its lease')) &&
        r.code !== null
      ) {
        // the run may have finished its rollback before the second Ctrl-C arrived: then there was nothing to say
        if (!(r.code === 130 && r.events.some((e) => e.type === 'service:action' && e.action === 'rollback')))
          bad.push(`no "press Ctrl-C again" line (exit ${r.code})`);
      }
      if (said.some((l) => /^\s+at\s/.test(l))) bad.push('a stack trace');
      const what = `${plan.kind}${plan.third ? ' (+3rd)' : ''}${plan.mode ? ` ${plan.mode}` : ''} #${i + 1} in ${r.endedIn} (+${plan.delayMs} ms): exit ${r.code ?? r.signal}`;
      if (bad.length) {
        failures.push(`${what}: ${bad.join('; ')}`);
        log(`${what}: NOT known-good after ${Math.round((Date.now() - r.deathAt) / 1000)} s: ${bad.join('; ')}`);
        // put the host back for the next end (so one failure does not cascade)
        resetUnit(host);
      } else {
        st.recovered += 1;
        st.ms.push(goodAt - r.deathAt);
        st.how[how] = (st.how[how] ?? 0) + 1;
        log(`${what}: known-good after ${((goodAt - r.deathAt) / 1000).toFixed(1)} s (${how}), unlocked`);
      }
    }
    // the last end's "next" run: a real apply, without --break-lock
    const a = await runCli(
      [
        'apply',
        '-c',
        config,
        '--ssh-config',
        host.sshConfig,
        '--lease',
        `${LEASE_S}s`,
        '--set',
        'speculative_num_steps=5',
      ],
      {},
    );
    if (a.code === 0) nextRunProofs += 1;
    else
      failures.push(
        `the apply after the last end failed (exit ${a.code}): ${a.stderr
          .split('\n')
          .filter((l) => l && !l.startsWith('{'))
          .slice(-2)
          .join(' | ')
          .slice(0, 240)}`,
      );
  } finally {
    if (cut.active) {
      try {
        setLink(host, 'blackhole', true);
        setLink(host, 'unreachable', true);
      } catch {
        /* torn down with the host */
      }
    }
    removeSimUnit(host, UNIT);
    removeDir(dir);
  }
  const trials = KINDS.reduce((s, k) => s + stats[k].trials, 0);
  const recovered = KINDS.reduce((s, k) => s + stats[k].recovered, 0);
  const perKindText = KINDS.map((k) => {
    const s = stats[k];
    const how = Object.entries(s.how)
      .map(([w, n]) => `${w} ${n}`)
      .join(', ');
    return `${k} ${s.recovered}/${s.trials} known-good in median ${((median(s.ms) ?? 0) / 1000).toFixed(1)} s, max ${(Math.max(0, ...s.ms) / 1000).toFixed(1)} s (${how})`;
  }).join('; ');
  return {
    trials,
    recovered,
    lost: 0,
    stateAfter: failures.length
      ? `NOT known-good: ${failures[0]}`.slice(0, 240)
      : `known-good and unlocked ${recovered}/${trials} within the lease (${LEASE_S} s); next run without --break-lock ${nextRunProofs}/${trials}`,
    notes: `seed ${seed}; ${perKindText}; "press Ctrl-C again" said in ${pressAgain}/${stats['SIGINT x2'].trials} double SIGINTs; ${Math.round((Date.now() - t0) / 1000)} s${failures.length > 1 ? `; also: ${failures.slice(1, 4).join('; ')}` : ''}`,
    kinds: stats,
    pass: failures.length === 0 && trials === schedule.length && recovered === trials && nextRunProofs === trials,
  };
}
