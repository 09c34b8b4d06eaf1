// Fault: the store's disk fills up in the middle of a real campaign (issue 11 item 4). The store lives on a small
// tmpfs mounted for the trial; at a random phase of a random trial the disk is filled to the last byte. Expected:
// one coded line naming the disk and the fix (no stack), PRAGMA integrity_check = ok, the unit on a known-good
// config (and its host lock released), and once the space is back `tune --resume` finishes with no trial lost.
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import {
  installSimUnit,
  isOneLine,
  loadHosts,
  readUnitState,
  removeSimUnit,
  ROOT,
  runCli,
  seeded,
  writeLocalConfig,
} from './_unit-support.mjs';

export const fault = 'disk-full';
export const describe =
  'store on a full tmpfs at random points of a campaign: one-line E_STORE_FULL, integrity ok, known-good, resume loses nothing';

const UNIT = 'spectune-fault-diskfull.service';
const PORT = 31711;
/** Big enough for a fresh store and a few trials; small enough to fill in a blink. */
const TMPFS_SIZE = '4m';
const TRIALS_PER_CAMPAIGN = 1;
/** The campaign runs a baseline, TRIALS_PER_CAMPAIGN search trials and a soak; the disk fills in the baseline or the search trial. */
const FILL_IN_TRIALS = 2;
const Database = createRequire(join(ROOT, 'package.json'))('better-sqlite3');

// Fill a directory's disk to the last byte; returns the filler's path.
function fillDisk(dir) {
  const path = join(dir, 'filler');
  const fd = openSync(path, 'w');
  const block = Buffer.alloc(64 * 1024);
  try {
    for (;;) writeSync(fd, block);
  } catch (e) {
    if (e.code !== 'ENOSPC') throw e;
    // the last partial block: byte by byte until even that is refused
    try {
      for (;;) writeSync(fd, block, 0, 1);
    } catch {
      /* full */
    }
  } finally {
    closeSync(fd);
  }
  return path;
}

// Mount a small tmpfs at dir/disk (root only); returns its path and how to unmount it.
function mountTmpfs(dir) {
  const disk = join(dir, 'disk');
  mkdirSync(disk);
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_SIZE}`, 'tmpfs', disk], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`mount tmpfs: ${r.stderr.trim()} (the disk-full fault needs root)`);
  return { disk, umount: () => spawnSync('umount', [disk]) };
}

// The finished trials the store holds: seq -> "state params".
function storedTrials(dbPath) {
  const db = new Database(dbPath, { readonly: true });
  try {
    const integrity = db.pragma('integrity_check', { simple: true });
    const rows = db.prepare('SELECT seq, state, params_json FROM trials').all();
    return { integrity, rows: new Map(rows.map((r) => [r.seq, `${r.state} ${r.params_json}`])) };
  } finally {
    db.close();
  }
}

// One campaign with the disk filled at (trial, phase); returns what happened.
async function runTrial(h, point, log) {
  installSimUnit(h, UNIT, PORT);
  const { dir } = writeLocalConfig({
    host: h.name,
    endpoint: `http://${h.ip}:${PORT}`,
    unit: UNIT,
    store: 'unused',
    trials: TRIALS_PER_CAMPAIGN,
  });
  const { disk, umount } = mountTmpfs(dir);
  const { dir: configDir, config } = writeLocalConfig({
    host: h.name,
    endpoint: `http://${h.ip}:${PORT}`,
    unit: UNIT,
    store: join(disk, 'tune.db'),
    trials: TRIALS_PER_CAMPAIGN,
  });
  const env = { SPECTUNE_ACTION_LOG: join(dir, 'actions.jsonl') };
  const args = ['tune', '-c', config, '--json', '--ssh-config', h.sshConfig];
  let filler = null;
  try {
    const first = await runCli(args, {
      env,
      onEvent: (e) => {
        if (!filler && e.type === 'trial:phase' && e.trial === point.trial && e.phase === point.phase)
          filler = fillDisk(disk);
      },
    });
    const oneLine =
      first.code === 1 &&
      isOneLine(
        first.stderr,
        /^spectune: store \S+: the disk is full \(.+ free of .+\); nothing was lost, the store is consistent \(hint: free space on .+ then run spectune tune --resume\)$/,
      );
    const finished = first.events.filter((e) => e.type === 'trial:end' && e.status !== 'skipped').map((e) => e.trial);
    const afterFault = await readUnitState(h, UNIT, PORT);
    if (filler) rmSync(filler);
    const stored = storedTrials(join(disk, 'tune.db'));
    const before = new Map([...stored.rows].filter(([seq]) => finished.includes(seq)));
    const resumed = await runCli([...args, '--resume'], { env });
    const done = resumed.code === 0 && JSON.parse(resumed.stdout || '{}').status === 'done';
    const end = storedTrials(join(disk, 'tune.db'));
    const lost = [...before].filter(([seq, v]) => end.rows.get(seq) !== v).length + (finished.length - before.size);
    const afterResume = await readUnitState(h, UNIT, PORT);
    const ok =
      filler !== null &&
      oneLine &&
      stored.integrity === 'ok' &&
      end.integrity === 'ok' &&
      afterFault.knownGood &&
      afterFault.lock === 'unlocked' &&
      done &&
      lost === 0 &&
      afterResume.knownGood;
    if (!ok)
      log(
        `trial ${point.trial}/${point.phase}: filled=${filler !== null} oneLine=${oneLine} exit=${first.code} integrity=${stored.integrity}/${end.integrity} afterFault=${JSON.stringify(afterFault)} resumed=${resumed.code} lost=${lost}\n${first.stderr
          .split('\n')
          .filter((l) => !l.startsWith('{'))
          .slice(-5)
          .join('\n')}\n${resumed.stderr
          .split('\n')
          .filter((l) => !l.startsWith('{'))
          .slice(-5)
          .join('\n')}`,
      );
    return {
      ok,
      lost,
      knownGood: afterFault.knownGood && afterResume.knownGood,
      message:
        first.stderr
          .split('\n')
          .filter((l) => l.startsWith('spectune: store'))
          .at(-1) ?? null,
    };
  } finally {
    umount();
    rmSync(dir, { recursive: true, force: true });
    rmSync(configDir, { recursive: true, force: true });
  }
}

// The fault module's entry point.
export async function run({ short, log }) {
  const { hosts, why } = loadHosts();
  if (!hosts) return { trials: 0, recovered: 0, lost: 0, stateAfter: `skipped: ${why}`, pass: false };
  if (process.getuid?.() !== 0)
    return { trials: 0, recovered: 0, lost: 0, stateAfter: 'skipped: mounting a tmpfs needs root', pass: false };
  const h = hosts.find((x) => x.name === 'th2') ?? hosts[0];
  const seed = Number(process.env.SPECTUNE_FAULTS_SEED ?? Date.now() % 1_000_000);
  const rand = seeded(seed);
  const n = short ? 2 : 8;
  let recovered = 0,
    lost = 0,
    knownGood = 0,
    message = null;
  try {
    for (let i = 0; i < n; i++) {
      const trial = 1 + Math.floor(rand() * FILL_IN_TRIALS);
      const phases = trial === 1 ? ['wait-ready', 'warmup', 'bench'] : ['feasibility', 'deploy', 'warmup', 'bench'];
      const point = { trial, phase: phases[Math.floor(rand() * phases.length)] };
      log(`${i + 1}/${n}: disk full at trial ${point.trial}, phase ${point.phase}`);
      const r = await runTrial(h, point, log);
      recovered += r.ok ? 1 : 0;
      lost += r.lost;
      knownGood += r.knownGood ? 1 : 0;
      message ??= r.message;
    }
  } finally {
    removeSimUnit(h, UNIT);
  }
  return {
    trials: n,
    recovered,
    lost,
    stateAfter: `known-good ${knownGood}/${n}`,
    notes: `seed ${seed}; the error: ${message}`,
  };
}
