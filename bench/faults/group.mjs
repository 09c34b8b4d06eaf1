// Fault: a model on two hosts (issue 25): rank0 and rank1 of the SIMULATED two-node SGLang on two fault hosts of our
// own, the rank-to-rank link through a relay on this machine. At seeded-random points of a campaign either rank1's
// network is cut (its veth down and the relay's connections dropped, 5-40 s) or spectune is SIGKILLed; then the run
// is resumed, as an operator would. Checked after every fault, once the host-side leases had their say: no rank runs
// a config its peer does not (the same steps in force on both, no candidate left on either, both active). At the
// end: the campaign finished and both ranks run its winner.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  acquireFaultHost,
  bootFaultHost,
  checkTrials,
  classify,
  healthCode,
  readTrials,
  removeDir,
  runCli,
  seededRandom,
  sshRun,
  teardownFaultHost,
  whyNotRunnable,
} from './_support.mjs';

export const fault = 'group';
export const describe =
  'two ranks (rank0 + rank1): rank1 cut off 5-40 s or spectune SIGKILLed at random points, then --resume';

const UNIT = 'spectune-fault-group.service';
const PORT = 31761;
const DIST_PORT = 31762;
const LEASE_S = 30;
const PROFILE = 'qwen3.5-122b-a10b-2node';
const TIME_SCALE = 0.02;
/** Where a fault lands, and how long after entering that part of a trial it may wait (ms, uniform). */
const CLASSES = { deploy: 300, restart: 600, readiness: 2000, benchmark: 2000 };
const MAX_RUNS_PER_CAMPAIGN = 20;
/** After a fault: how long the ranks get to settle (the leases lapse after LEASE_S, then a restart). */
const SETTLE_MS = (LEASE_S + 45) * 1000;

// One rank's unit (as test/e2e/two-host-support.ts).
function renderRankUnit(port, rank, distAddr) {
  return [
    '[Unit]',
    `Description=${UNIT}: SIMULATED SGLang rank ${rank} of 2 (spectune sim) for the fault suite`,
    '',
    '[Service]',
    `ExecStart=/usr/local/bin/node /opt/spectune/bin/spectune.js sim --sim-profile ${PROFILE} --sim-time-scale ${TIME_SCALE} --model-path Qwen/Qwen3.5-122B-A10B-FP8 --host 0.0.0.0 --port ${port} --tp-size 2 --nnodes 2 --node-rank ${rank} --dist-init-addr ${distAddr} --speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1`,
    'Restart=always',
    'RestartSec=1',
    'TimeoutStopSec=20',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}

// Install a rank's unit fresh (no drop-in, no history, no lease) and start it.
function installRank(h, rank, distAddr) {
  const timer = `spectune-lease-${UNIT.replace(/\.service$/, '')}.timer`;
  sshRun(
    h,
    `systemctl stop ${timer} ${UNIT} 2>/dev/null; rm -rf /etc/systemd/system/${UNIT}.d /run/systemd/system/${UNIT}.d /run/spectune/${UNIT} /var/lib/spectune/${UNIT}; true`,
  );
  sshRun(h, `cat > /etc/systemd/system/${UNIT}`, renderRankUnit(PORT, rank, distAddr));
  sshRun(h, `systemctl daemon-reload && systemctl reset-failed ${UNIT} 2>/dev/null; systemctl restart ${UNIT}`);
}

// Remove the unit and everything spectune left for it.
function removeRank(h) {
  const timer = `spectune-lease-${UNIT.replace(/\.service$/, '')}.timer`;
  try {
    sshRun(
      h,
      `systemctl stop ${timer} ${UNIT} 2>/dev/null; rm -rf /etc/systemd/system/${UNIT} /etc/systemd/system/${UNIT}.d /run/systemd/system/${UNIT}.d /run/spectune/${UNIT} /var/lib/spectune/${UNIT}; systemctl daemon-reload; true`,
    );
  } catch {
    /* host gone */
  }
}

// The rank-to-rank link: a relay that drops its connections and holds new ones while cut.
function startRelay(listenHost, target, port) {
  let isCut = false;
  const open = new Set();
  const held = [];
  const server = createServer((down) => {
    let up = null;
    let closed = false;
    down.on('error', () => undefined);
    down.on('close', () => {
      closed = true;
      open.delete(down);
      up?.destroy();
    });
    open.add(down);
    const attempt = () => {
      if (closed) return;
      if (isCut) {
        held.push(attempt);
        return;
      }
      const s = connect(port, target);
      s.once('connect', () => {
        up = s;
        if (closed) {
          s.destroy();
          return;
        }
        s.pipe(down);
        down.pipe(s);
        s.on('close', () => down.destroy());
      });
      s.on('error', () => {
        if (up !== s) {
          s.destroy();
          setTimeout(attempt, 100);
        }
      });
    };
    attempt();
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, listenHost, () =>
      resolve({
        server,
        cut() {
          isCut = true;
          for (const s of open) s.destroy();
        },
        restore() {
          isCut = false;
          for (const a of held.splice(0)) a();
        },
      }),
    );
  });
}

// Cut or restore rank1's network (this machine's end of its veth: connects fail at once, sessions stall).
function setLink(h, up) {
  const r = spawnSync('ip', ['link', 'set', h.veth, up ? 'up' : 'down'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ip link set ${h.veth}: ${r.stderr.trim()}`);
}

// One rank as the host says: steps in force, a candidate (runtime drop-in) present, active.
function readRank(h) {
  const out = sshRun(
    h,
    [
      `echo "steps=$(systemctl cat ${UNIT} | grep -o -- '--speculative-num-steps[ =][0-9]*' | tail -1 | grep -o '[0-9]*$')"`,
      `echo "trial=$(test -e /run/systemd/system/${UNIT}.d/90-spectune.trial.conf && echo yes)"`,
      `echo "active=$(systemctl is-active ${UNIT})"`,
      `echo "current=$(cat /var/lib/spectune/${UNIT}/current 2>/dev/null)"`,
      `echo "good=$(cat /var/lib/spectune/${UNIT}/good 2>/dev/null)"`,
    ].join('; '),
  );
  const kv = Object.fromEntries(
    out
      .trim()
      .split('\n')
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  return {
    steps: Number(kv.steps),
    trial: kv.trial === 'yes',
    active: kv.active,
    current: kv.current || null,
    good: kv.good || null,
  };
}

// Wait until no candidate is left on either rank (the leases had their say) and both are up; then the split check.
async function settledSplit(r0, r1) {
  const until = Date.now() + SETTLE_MS;
  let a;
  let b;
  for (;;) {
    [a, b] = [readRank(r0), readRank(r1)];
    const settled = !a.trial && !b.trial && a.active === 'active' && b.active === 'active';
    if ((settled && a.steps === b.steps) || Date.now() > until) break;
    await new Promise((r) => setTimeout(r, 2000));
  }
  const p = [];
  if (a.steps !== b.steps) p.push(`rank0 runs steps=${a.steps}, rank1 steps=${b.steps}`);
  if (a.trial || b.trial) p.push(`a candidate is still in force (rank0 ${a.trial}, rank1 ${b.trial})`);
  if (a.active !== 'active' || b.active !== 'active') p.push(`rank0 ${a.active}, rank1 ${b.active}`);
  return { problems: p, a, b };
}

// Run the fault: `faults` faults (cuts and kills alternating, points seeded) over as many campaigns as it takes.
export async function run({ short, log }) {
  const why = whyNotRunnable();
  if (why) return { trials: 0, recovered: 0, lost: 0, stateAfter: why, pass: false };
  const faults = short ? 2 : 10;
  const seed = Number(process.env.SPECTUNE_FAULT_SEED || 11) + 25;
  const rand = seededRandom(seed);
  const names = Object.keys(CLASSES);
  const plans = Array.from({ length: faults + MAX_RUNS_PER_CAMPAIGN }, (_, i) => {
    const target = names[Math.floor(rand() * names.length)];
    return {
      kind: i % 2 ? 'sigkill' : 'netcut',
      target,
      delayMs: Math.floor(rand() * CLASSES[target]),
      seconds: 5 + Math.floor(rand() * 36),
    };
  });
  const r0 = acquireFaultHost();
  const r1 = bootFaultHost(`${process.env.SPECTUNE_FAULT_HOST || 'thfk'}g`, 1);
  process.once('exit', () => {
    try {
      teardownFaultHost(r1);
    } catch {
      /* best effort */
    }
  });
  const relay = await startRelay(r1.hostIp, r0.ip, DIST_PORT);
  const sshConfig = join(mkdtempSync(join(tmpdir(), 'spectune-faults-group-')), 'ssh_config');
  writeFileSync(sshConfig, `${readFileSync(r0.sshConfig, 'utf8')}\n${readFileSync(r1.sshConfig, 'utf8')}`);
  const failures = [];
  const spread = { netcut: 0, sigkill: 0 };
  let done = 0;
  let recovered = 0;
  let lost = 0;
  let campaigns = 0;
  try {
    while (done < faults && failures.length === 0) {
      campaigns += 1;
      installRank(r0, 0, `${r0.ip}:${DIST_PORT}`);
      installRank(r1, 1, `${r1.hostIp}:${DIST_PORT}`);
      const dir = mkdtempSync(join(tmpdir(), 'spectune-faults-group-'));
      const config = join(dir, 'spectune.yaml');
      writeFileSync(
        config,
        [
          'target:',
          '  engine: sglang',
          `  endpoint: http://${r0.ip}:${PORT}`,
          '  manager: systemd',
          `  lease: ${LEASE_S}s`,
          '  hosts:',
          `    - { host: ${r0.name}, unit: ${UNIT}, role: rank0 }`,
          `    - { host: ${r1.name}, unit: ${UNIT}, role: rank1 }`,
          'space:',
          '  speculative_num_steps: { values: [3, 4, 5, 6] }',
          'search: { strategy: grid, noiseMargin: 4%, repeats: 1, soak: { repeats: 0 } }',
          'objective: { metric: decodeTokensPerSec.mean, concurrency: 1 }',
          'benchmark: { concurrency: [1], requests: 3, inputTokens: 128, outputTokens: 96, warmup: 1, timeouts: { ready: 120s, firstToken: 30s, stall: 10s, total: 60s } }',
          `budget: { trials: ${short ? 3 : 5}, hours: 1h }`,
          'store: ./tune.db',
          '',
        ].join('\n'),
      );
      let resume = false;
      let finished = null;
      for (let runs = 0; runs < MAX_RUNS_PER_CAMPAIGN && !finished && failures.length === 0; runs++) {
        const plan = done < faults ? plans[done] : null;
        let cls = null;
        let trial = 0;
        let armed = false;
        let landed = null;
        let cutOver = Promise.resolve();
        const r = await runCli(
          ['tune', '-c', config, '--json', '--ssh-config', sshConfig, ...(resume ? ['--resume'] : [])],
          {},
          (e, child) => {
            const prev = cls;
            const k = classify(e, cls);
            if (k) cls = k;
            if (e.type === 'trial:start') trial = e.trial;
            if (!plan || armed || trial < 2 || k !== plan.target || prev === plan.target) return;
            armed = true;
            setTimeout(() => {
              landed = cls;
              if (plan.kind === 'sigkill') {
                child.kill('SIGKILL');
                return;
              }
              setLink(r1, false);
              relay.cut();
              cutOver = new Promise((ok) =>
                setTimeout(() => {
                  setLink(r1, true);
                  relay.restore();
                  ok();
                }, plan.seconds * 1000),
              );
            }, plan.delayMs);
          },
        );
        await cutOver;
        if (landed) {
          done += 1;
          spread[plan.kind] += 1;
          const { problems, a } = await settledSplit(r0, r1);
          const what = `fault ${done}/${faults}: ${plan.kind}${plan.kind === 'netcut' ? ` ${plan.seconds}s` : ''} in ${landed} (run ${r.signal ?? `exit ${r.code}`})`;
          if (problems.length) failures.push(`${what}: ${problems.join('; ')}`);
          else recovered += 1;
          log(
            `${what}: ${problems.length ? problems.join('; ') : `both ranks on steps=${a.steps}, no candidate left`}`,
          );
        } else if (r.code !== 0) {
          failures.push(
            `run without a fault failed (exit ${r.code}): ${r.stderr.trim().split('\n').slice(-1)[0]?.slice(0, 200)}`,
          );
        }
        if (r.code === 0 && r.result?.status === 'done') finished = r.result;
        resume = true;
      }
      const problems = checkTrials(readTrials(dir));
      lost += problems.filter((p) => /never redone|not contiguous|repeats/.test(p)).length;
      if (finished) {
        const { problems: split, a } = await settledSplit(r0, r1);
        problems.push(...split);
        const best = finished.best?.config?.speculative_num_steps ?? 3;
        if (a.steps !== best) problems.push(`ended on steps=${a.steps}, not the winner ${best}`);
        if ((await healthCode(r0, PORT)) !== 200) problems.push('rank0 health not 200 at the end');
      } else if (failures.length === 0) problems.push('campaign did not finish');
      failures.push(...problems.map((p) => `campaign ${campaigns}: ${p}`));
      removeDir(dir);
    }
  } finally {
    try {
      setLink(r1, true);
    } catch {
      /* torn down below anyway */
    }
    relay.restore();
    removeRank(r0);
    removeRank(r1);
    await new Promise((ok) => relay.server.close(ok));
  }
  return {
    trials: done,
    recovered: Math.min(recovered, done),
    lost,
    stateAfter: failures.length
      ? `FAILED: ${failures[0]}`.slice(0, 200)
      : `no rank split after ${done}/${done} faults; both on the winner`,
    notes: `seed ${seed}; ${spread.netcut} cut(s) of rank1, ${spread.sigkill} SIGKILL(s); lease ${LEASE_S} s${failures.length > 1 ? `; also: ${failures.slice(1, 4).join('; ')}` : ''}`,
    pass: failures.length === 0 && done === faults && recovered === done && lost === 0,
  };
}
