// Fault: two operators start spectune on one unit at once (issue 11 item 5), from two shells of this machine and from
// two machines (this one over SSH, and the test host itself running spectune locally). Expected: exactly one
// proceeds, the other is refused in one line naming the first's owner (user@machine pid) and start time; a
// `--dry-run` meanwhile takes no lock and changes nothing; after kill -9 of the owner the lock is reported as stale
// (one line) and broken with --break-lock, saying what it broke; the unit ends on a known-good config, unlocked.
import { rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import {
  installSimUnit,
  isOneLine,
  loadHosts,
  plainLines,
  readUnitState,
  removeSimUnit,
  ROOT,
  runArgv,
  runCli,
  seeded,
  ssh,
  tuneConfigText,
  writeLocalConfig,
} from './_unit-support.mjs';

export const fault = 'two-operators';
export const describe =
  'two tune runs on one unit from two shells / two machines: one proceeds, one refused naming the owner; kill -9 leaves a stale lock broken by --break-lock';

const UNIT = 'spectune-fault-twoops.service';
const PORT = 31721;
const LOCK = `/var/lib/spectune/${UNIT}/lock`;
/** A budget no racer reaches: the one that proceeds is stopped with Ctrl-C once the other is refused. */
const RACE_TRIALS = 8;
/** The refusal of a live lock, as one line. */
const REFUSED = new RegExp(
  `^spectune: \\S+: ${UNIT.replace(/\./g, '\\.')} is in use by (\\S+)@(\\S+) pid (\\d+) \\(spectune tune\\) since (\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ) \\(heartbeat \\d+ s ago\\) \\(hint: wait for that spectune to finish`,
);
/** The refusal of a dead owner's lock, as one line. */
const STALE = new RegExp(
  `^spectune: \\S+: ${UNIT.replace(/\./g, '\\.')} is locked by \\S+@(\\S+) pid (\\d+) \\(spectune tune\\) since \\S+Z, which looks dead: pid \\d+ is not running on \\S+ \\(hint: .*--break-lock`,
);

// Copy this checkout's build into the test host, so the host itself can run this spectune as a second "machine".
function installClientOnHost(h) {
  const dir = `/tmp/spectune-faults-client-${process.pid}`;
  const tar = spawnSync('tar', ['-C', ROOT, '-c', 'dist', 'bin', 'package.json', 'profiles', 'schema', 'prompts'], {
    maxBuffer: 256 * 1024 * 1024,
  });
  if (tar.status !== 0) throw new Error(`tar the build: ${tar.stderr}`);
  ssh(
    h,
    `rm -rf ${dir} && mkdir -p ${dir} && tar -x -C ${dir} && ln -s /opt/spectune/node_modules ${dir}/node_modules`,
    { input: tar.stdout },
  );
  ssh(h, `cat > ${dir}/spectune.yaml`, {
    input: tuneConfigText({
      host: null,
      endpoint: `http://127.0.0.1:${PORT}`,
      unit: UNIT,
      store: `${dir}/tune.db`,
      trials: RACE_TRIALS,
    }),
  });
  return { dir, remove: () => ssh(h, `rm -rf ${dir}`, { check: false }) };
}

// The lock record on the host, or null.
function readLock(h) {
  const r = ssh(h, `cat ${LOCK} 2>/dev/null`, { check: false });
  try {
    return r.stdout.trim() ? JSON.parse(r.stdout) : null;
  } catch {
    return null;
  }
}

// A `spectune tune` client: here (a shell of this machine) or on the host (a second machine).
function startClient(kind, ctx, extra = [], onEvent, onSpawn) {
  if (kind === 'here')
    return runCli(['tune', '-c', ctx.config, '--json', '--ssh-config', ctx.h.sshConfig, ...extra], {
      env: ctx.env,
      onEvent,
      onSpawn,
    });
  const cmd = `cd ${ctx.remote.dir} && exec node bin/spectune.js tune -c spectune.yaml --json ${extra.join(' ')}`;
  return runArgv(['ssh', '-F', ctx.h.sshConfig, ctx.h.name, cmd], { onEvent, onSpawn });
}

// Stop the client that holds the lock with Ctrl-C (SIGINT): here by pid, on the host by the pid its lock names.
function interrupt(kind, child, h) {
  if (kind === 'here') {
    child.kill('SIGINT');
    return;
  }
  const pid = readLock(h)?.owner?.pid;
  if (pid) ssh(h, `kill -INT ${Number(pid)}`, { check: false });
}

// One race: two clients started together (random stagger); returns whether exactly one proceeded and the other
// was refused naming it.
async function race(ctx, kinds, rand, checkDryRun, log) {
  const children = [null, null];
  let winner = -1;
  let lockSeen = null;
  let dryRunOk = null;
  const procs = kinds.map((kind, i) =>
    new Promise((res) => setTimeout(res, Math.floor(rand() * 300))).then(() =>
      startClient(
        kind,
        ctx,
        [],
        (e) => {
          if (e.type === 'trial:phase' && winner === -1) winner = i;
        },
        (child) => {
          children[i] = child;
        },
      ),
    ),
  );
  // wait until one holds the lock and the other has ended
  const firstDone = await Promise.race(procs.map((p, i) => p.then((r) => ({ i, r }))));
  const loser = firstDone.i;
  const w = 1 - loser;
  for (let t = 0; t < 600 && winner === -1; t++) await new Promise((res) => setTimeout(res, 100));
  lockSeen = readLock(ctx.h);
  if (checkDryRun) {
    const before = ssh(ctx.h, `cat ${LOCK}`, { check: false }).stdout;
    const dry = await runCli(['tune', '-c', ctx.config, '--dry-run', '--ssh-config', ctx.h.sshConfig], {
      env: ctx.env,
    });
    const after = ssh(ctx.h, `cat ${LOCK}`, { check: false }).stdout;
    // a heartbeat may refresh the lock meanwhile: the owner and token must be the same
    const same = (a, b) => {
      try {
        return JSON.parse(a).token === JSON.parse(b).token;
      } catch {
        return false;
      }
    };
    dryRunOk = dry.code === 0 && same(before, after);
    if (!dryRunOk)
      log(
        `dry-run while locked: exit ${dry.code}, lock kept: ${same(before, after)}\n${plainLines(dry.stderr).slice(-3).join('\n')}`,
      );
  }
  interrupt(kinds[w], children[w], ctx.h);
  const wr = await procs[w];
  const m = plainLines(firstDone.r.stderr)[0]?.match(REFUSED);
  const named =
    m &&
    lockSeen &&
    m[2] === lockSeen.owner.machine &&
    Number(m[3]) === lockSeen.owner.pid &&
    m[4] === new Date(lockSeen.startedAt).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const oneLine = firstDone.r.code === 1 && isOneLine(firstDone.r.stderr, REFUSED);
  const state = await readUnitState(ctx.h, UNIT, PORT);
  const ok =
    winner === w &&
    oneLine &&
    Boolean(named) &&
    wr.code === 130 &&
    state.knownGood &&
    state.lock === 'unlocked' &&
    dryRunOk !== false;
  if (!ok)
    log(
      `race ${kinds.join(' vs ')}: winner=${winner} loser=${loser} loser exit ${firstDone.r.code} oneLine=${oneLine} named=${named} winner exit ${wr.code} state=${JSON.stringify(state)}\n${plainLines(firstDone.r.stderr).slice(-3).join('\n')}\n${plainLines(wr.stderr).slice(-3).join('\n')}`,
    );
  return { ok, refusal: plainLines(firstDone.r.stderr)[0] ?? '', state };
}

// kill -9 of the lock's owner: the next command is refused as stale in one line; --break-lock breaks it, saying so.
async function killNine(ctx, kind, log) {
  let killed = false;
  const owner = startClient(kind, ctx, [], (e, child) => {
    if (killed || e.type !== 'trial:phase') return;
    killed = true;
    if (kind === 'here') child.kill('SIGKILL');
    else {
      const pid = readLock(ctx.h)?.owner?.pid;
      if (pid) ssh(ctx.h, `kill -KILL ${Number(pid)}`, { check: false });
    }
  });
  const o = await owner;
  const stale = readLock(ctx.h);
  // the stale check must run where the owner ran (only there is "pid gone" a proof); from elsewhere the lease decides
  const again =
    kind === 'here'
      ? await runCli(['apply', '-c', ctx.config, '--ssh-config', ctx.h.sshConfig, '--set', 'speculative_num_steps=4'], {
          env: ctx.env,
        })
      : await runArgv([
          'ssh',
          '-F',
          ctx.h.sshConfig,
          ctx.h.name,
          `cd ${ctx.remote.dir} && exec node bin/spectune.js apply -c spectune.yaml --set speculative_num_steps=4`,
        ]);
  const refusedStale = again.code === 1 && isOneLine(again.stderr, STALE);
  const broke =
    kind === 'here'
      ? await runCli(
          [
            'apply',
            '-c',
            ctx.config,
            '--ssh-config',
            ctx.h.sshConfig,
            '--set',
            'speculative_num_steps=4',
            '--break-lock',
          ],
          { env: ctx.env },
        )
      : await runArgv([
          'ssh',
          '-F',
          ctx.h.sshConfig,
          ctx.h.name,
          `cd ${ctx.remote.dir} && exec node bin/spectune.js apply -c spectune.yaml --set speculative_num_steps=4 --break-lock`,
        ]);
  const said = plainLines(broke.stderr).some(
    (l) =>
      /broke the stale lock of \S+ held by \S+@\S+ pid \d+ \(spectune tune\) since \S+ \(pid \d+ is not running on \S+\)$/.test(
        l,
      ) &&
      stale &&
      l.includes(`pid ${stale.owner.pid} `),
  );
  const state = await readUnitState(ctx.h, UNIT, PORT);
  const ok =
    o.signal === 'SIGKILL' || (kind === 'host' && o.code !== 0)
      ? refusedStale && broke.code === 0 && said && state.lock === 'unlocked' && state.knownGood
      : false;
  if (!ok)
    log(
      `kill -9 (${kind}): owner ${o.code}/${o.signal} stale=${JSON.stringify(stale)} refusedStale=${refusedStale} broke exit ${broke.code} said=${said} state=${JSON.stringify(state)}\n${plainLines(again.stderr).join('\n')}\n${plainLines(broke.stderr).join('\n')}`,
    );
  return { ok, refusal: plainLines(again.stderr)[0] ?? '' };
}

// The fault module's entry point.
export async function run({ short, log }) {
  const { hosts, why } = loadHosts();
  if (!hosts) return { trials: 0, recovered: 0, lost: 0, stateAfter: `skipped: ${why}`, pass: false };
  const h = hosts.find((x) => x.name === 'th1') ?? hosts[0];
  const seed = Number(process.env.SPECTUNE_FAULTS_SEED ?? Date.now() % 1_000_000);
  const rand = seeded(seed);
  const races = short ? 2 : 20;
  const kills = short ? 1 : 4;
  installSimUnit(h, UNIT, PORT);
  const remote = installClientOnHost(h);
  const local = writeLocalConfig({
    host: h.name,
    endpoint: `http://${h.ip}:${PORT}`,
    unit: UNIT,
    store: 'tune.db',
    trials: RACE_TRIALS,
  });
  const ctx = { h, config: local.config, env: { SPECTUNE_ACTION_LOG: join(local.dir, 'actions.jsonl') }, remote };
  let recovered = 0,
    knownGood = 0;
  const samples = [];
  try {
    for (let i = 0; i < races; i++) {
      // even races: two machines (this one over SSH, the host locally); odd: two shells of this machine
      const kinds = i % 2 === 0 ? (rand() < 0.5 ? ['here', 'host'] : ['host', 'here']) : ['here', 'here'];
      log(`race ${i + 1}/${races}: ${kinds.join(' vs ')}`);
      const r = await race(ctx, kinds, rand, i === 0, log);
      recovered += r.ok ? 1 : 0;
      knownGood += r.state.knownGood ? 1 : 0;
      if (samples.length < 2 && r.ok) samples.push(r.refusal);
    }
    for (let i = 0; i < kills; i++) {
      const kind = i % 2 === 0 ? 'here' : 'host';
      log(`kill -9 ${i + 1}/${kills} (${kind})`);
      const r = await killNine(ctx, kind, log);
      recovered += r.ok ? 1 : 0;
      knownGood += r.ok ? 1 : 0;
      if (r.ok && samples.length < 3) samples.push(r.refusal);
    }
  } finally {
    remote.remove();
    removeSimUnit(h, UNIT);
    rmSync(local.dir, { recursive: true, force: true });
  }
  const n = races + kills;
  return {
    trials: n,
    recovered,
    lost: 0,
    stateAfter: `known-good, unlocked ${knownGood}/${n}`,
    notes: `seed ${seed}; ${races} races, ${kills} kill -9; e.g. ${samples.join(' | ')}`,
  };
}
