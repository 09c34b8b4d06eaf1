// Shared support of the host fault modules (sigkill, netcut, reboot): a fault host of their own booted with the
// testhost scripts, the simulated SGLang unit the e2e tune tests use, the real CLI run as an operator runs it, and
// readers of what the faults must not break (the store's trials, the unit's drop-in and version markers).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { runArgv } from './_unit-support.mjs';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = join(ROOT, 'bin/spectune.js');
const TESTHOST = join(ROOT, 'scripts/testhost');
const TH_BASE = process.env.SPECTUNE_TESTHOST_DIR || '/var/lib/spectune-testhost';
/** The seed's profile, and a time scale that turns its ~100 s load into ~2 s (as test/e2e/tune-support.ts). */
const PROFILE = 'qwen3.5-122b-a10b-2node';
const TIME_SCALE = 0.02;
/** The operator's config before tuning. */
export const START_STEPS = 3;

// The project's seeded PRNG (mulberry32), so a fault schedule can be replayed from its seed.
export { createRandom as seededRandom } from '../../dist/random.js';

// Why a module cannot run here (not root, no test hosts' rootfs), or null when it can.
export function whyNotRunnable() {
  if (process.getuid?.() !== 0) return 'skipped: needs root (the fault host is a systemd-nspawn container)';
  if (!existsSync(join(TH_BASE, 'rootfs/.spectune-testhost-built')))
    return `skipped: no test-host rootfs under ${TH_BASE} (run scripts/testhost/up-all.sh)`;
  if (!existsSync(join(TH_BASE, 'ssh/id_ed25519'))) return `skipped: no test-host client key under ${TH_BASE}/ssh`;
  return null;
}

// Run a testhost script as root; throws with its last output lines on failure.
function runScript(script, args, env = {}) {
  const r = spawnSync('bash', [join(TESTHOST, script), ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 300_000,
  });
  if (r.status !== 0)
    throw new Error(
      `${script} ${args.join(' ')} failed (exit ${r.status}): ${(r.stderr || '').trim().split('\n').slice(-5).join(' | ')}`,
    );
  return r.stderr;
}

// Boot a fault host of our own (never th1..th3, which other tests share): its own name, subnet, ssh config.
// Env overrides: SPECTUNE_FAULT_HOST_INDEX (subnet index of the first fault host, default 21).
export function bootFaultHost(name, offset = 0) {
  const index = Number(process.env.SPECTUNE_FAULT_HOST_INDEX || 21) + offset;
  const subnet = `10.250.${77 + index - 1}`;
  const dir = join(TH_BASE, name);
  mkdirSync(join(dir, 'keys'), { recursive: true });
  const key = join(dir, 'keys/ssh_host_ed25519_key');
  if (!existsSync(key))
    spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', key], { stdio: 'ignore' });
  const knownHosts = join(dir, 'known_hosts');
  writeFileSync(
    knownHosts,
    `${name},${subnet}.2 ${readFileSync(`${key}.pub`, 'utf8').split(' ').slice(0, 2).join(' ')}\n`,
  );
  const sshConfig = join(dir, 'ssh_config');
  writeFileSync(
    sshConfig,
    [
      `Host ${name}`,
      `  HostName ${subnet}.2`,
      '  User root',
      `  IdentityFile ${TH_BASE}/ssh/id_ed25519`,
      '  IdentitiesOnly yes',
      `  UserKnownHostsFile ${knownHosts}`,
      '  StrictHostKeyChecking yes',
      '  BatchMode yes',
      '  ConnectTimeout 5',
      '  LogLevel ERROR',
      '',
    ].join('\n'),
  );
  runScript('up-host.sh', [name, String(index)], { TESTHOST_SSH_CONFIG: sshConfig, TESTHOST_MEMCG: '0' });
  return {
    name,
    ip: `${subnet}.2`,
    hostIp: `${subnet}.1`,
    sshConfig,
    veth: `ve-st-${name}`,
    netns: `spectune-${name}`,
  };
}

// Tear a fault host down (processes, cgroups, network, disk); its keys stay for the next boot.
export function teardownFaultHost(h) {
  runScript('down-host.sh', [h.name]);
}

/** The fault host this process booted (shared by the modules of one suite run), or null. */
let shared = null;

// The fault modules' host: booted on first use, kept for the next module, torn down when this process exits (a
// killed run leaves it to the next boot, which tears leftovers down first).
export function acquireFaultHost() {
  if (shared && spawnSync('ssh', ['-F', shared.sshConfig, '-o', 'ConnectTimeout=3', shared.name, 'true']).status === 0)
    return shared;
  if (shared) teardownFaultHost(shared);
  shared = bootFaultHost(process.env.SPECTUNE_FAULT_HOST || 'thfk');
  const h = shared;
  process.once('exit', () => {
    try {
      teardownFaultHost(h);
    } catch (e) {
      process.stderr.write(`fault host teardown: ${e.message}\n`);
    }
  });
  return h;
}

// Reboot the fault host keeping its disk: orderly (systemd's poweroff) or hard (power loss); returns seconds taken.
export function rebootFaultHost(h, hard = false) {
  const t0 = Date.now();
  runScript('reboot-host.sh', hard ? [h.name, '--hard'] : [h.name], { TESTHOST_SSH_CONFIG: h.sshConfig });
  return (Date.now() - t0) / 1000;
}

// Run a shell script on a host over ssh (argv: one script string, as the e2e helpers do); throws on failure.
export function sshRun(h, script, input) {
  const r = spawnSync('ssh', ['-F', h.sshConfig, h.name, script], { input, encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`ssh ${h.name} ${script}: exit ${r.status}: ${r.stderr}`);
  return r.stdout;
}

// The simulated SGLang unit as an operator would write it (the e2e tune tests' unit).
function renderSimUnit(unit, port) {
  return [
    '[Unit]',
    `Description=${unit}: SIMULATED SGLang (spectune sim) for the fault suite`,
    '',
    '[Service]',
    `ExecStart=/usr/local/bin/node /opt/spectune/bin/spectune.js sim --sim-profile ${PROFILE} --sim-time-scale ${TIME_SCALE} --model-path Qwen/Qwen3.5-122B-A10B-FP8 --host 0.0.0.0 --port ${port} --tp-size 2 --speculative-algorithm EAGLE --speculative-num-steps ${START_STEPS} --speculative-eagle-topk 1`,
    'Restart=always',
    'RestartSec=1',
    'TimeoutStopSec=20',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}

// Install the unit fresh (no spectune drop-in, no version history), enabled so that it comes back after a reboot.
export function installSimUnit(h, unit, port) {
  sshRun(h, `systemctl stop ${unit} 2>/dev/null; rm -rf /etc/systemd/system/${unit}.d /var/lib/spectune/${unit}; true`);
  sshRun(h, `cat > /etc/systemd/system/${unit}`, renderSimUnit(unit, port));
  sshRun(
    h,
    `systemctl daemon-reload && systemctl reset-failed ${unit} 2>/dev/null; systemctl enable ${unit} 2>/dev/null; systemctl restart ${unit}`,
  );
}

// Remove the unit and everything spectune left for it.
export function removeSimUnit(h, unit) {
  sshRun(
    h,
    `systemctl disable ${unit} 2>/dev/null; systemctl stop ${unit} 2>/dev/null; rm -rf /etc/systemd/system/${unit} /etc/systemd/system/${unit}.d /var/lib/spectune/${unit}; systemctl daemon-reload; systemctl reset-failed ${unit} 2>/dev/null; true`,
  );
}

// A tune config for the unit in a fresh temp dir (the e2e tune tests' campaign); returns its dir and path.
export function writeTuneConfig(h, unit, port, { trials = 12 } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'spectune-faults-'));
  const config = join(dir, 'spectune.yaml');
  writeFileSync(
    config,
    [
      'target:',
      '  engine: sglang',
      `  endpoint: http://${h.ip}:${port}`,
      '  manager: systemd',
      '  hosts:',
      `    - host: ${h.name}`,
      `      unit: ${unit}`,
      'space:',
      '  speculative_num_steps: { min: 1, max: 10 }',
      'search: { strategy: adaptive, noiseMargin: 4%, repeats: 2, soak: { repeats: 1 } }',
      'objective: { metric: decodeTokensPerSec.mean, concurrency: 1 }',
      'benchmark: { concurrency: [1], requests: 4, inputTokens: 128, outputTokens: 192, warmup: 1, timeouts: { ready: 120s, firstToken: 30s, stall: 10s, total: 60s } }',
      `budget: { trials: ${trials}, hours: 1h }`,
      'store: ./tune.db',
      '',
    ].join('\n'),
  );
  return { dir, config };
}

// Remove a campaign's temp dir.
export function removeDir(dir) {
  rmSync(dir, { recursive: true, force: true });
}

// The tune command line an operator runs (progress as JSON lines on stderr, the result as JSON on stdout).
export function tuneArgs(h, config, resume) {
  return [
    'tune',
    '-c',
    config,
    '--json',
    '--confirm-probes',
    '--ssh-config',
    h.sshConfig,
    ...(resume ? ['--resume'] : []),
  ];
}

// Run the built CLI; `onEvent(e, child)` sees every progress event as it comes and may signal the child; `result` is
// the JSON it printed on stdout (null when killed or failed).
export async function runCli(args, env, onEvent) {
  const r = await runArgv([process.execPath, BIN, ...args], { env, onEvent, cwd: ROOT });
  let result = null;
  try {
    result = JSON.parse(r.stdout);
  } catch {
    /* killed or failed: no result */
  }
  return { ...r, result };
}

// The store's trials of every campaign, in order.
export function readTrials(dir) {
  const path = join(dir, 'tune.db');
  if (!existsSync(path)) return [];
  const db = new Database(path, { readonly: true });
  try {
    return db
      .prepare(
        'SELECT campaign_id AS campaign, seq, purpose, state, params_json AS params, reason, error FROM trials ORDER BY campaign_id, seq',
      )
      .all();
  } finally {
    db.close();
  }
}

// The store's campaigns (id, status).
export function readCampaigns(dir) {
  const path = join(dir, 'tune.db');
  if (!existsSync(path)) return [];
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare('SELECT id, status FROM campaigns ORDER BY id').all();
  } finally {
    db.close();
  }
}

// Trials lost or repeated in a campaign's store rows: numbers must be contiguous from 1; a config+reason is measured
// (or failed) at most once; every interrupted (skipped) trial is redone later with the same config and reason.
export function checkTrials(rows) {
  const problems = [];
  const byCampaign = new Map();
  for (const r of rows) byCampaign.set(r.campaign, [...(byCampaign.get(r.campaign) ?? []), r]);
  for (const [c, rs] of byCampaign) {
    rs.forEach((r, i) => {
      if (r.seq !== i + 1) problems.push(`campaign ${c}: trial numbers not contiguous at ${r.seq}`);
    });
    const finished = rs.filter((r) => r.state !== 'skipped');
    const seen = new Map();
    for (const r of finished) {
      const k = `${r.purpose} ${r.params} ${r.reason}`;
      if (seen.has(k)) problems.push(`campaign ${c}: trial ${r.seq} repeats trial ${seen.get(k)} (${k})`);
      seen.set(k, r.seq);
    }
    for (const s of rs.filter((r) => r.state === 'skipped')) {
      // the store's wording since issue 19: "skipped: spectune stopped during this trial; ... redone on resume", or a
      // benchmark the network cut: "skipped: benchmark failed: <why>; redone" (not the config's fault)
      if (!/^skipped: (spectune stopped during this trial|.*; redone$)/.test(s.error ?? ''))
        problems.push(
          `campaign ${c}: trial ${s.seq} skipped without saying it is redone as not the config's fault (${s.error})`,
        );
      const redone = rs.some((r) => r.seq > s.seq && r.params === s.params && r.reason === s.reason);
      const last = rs[rs.length - 1] === s;
      if (!redone && !last) problems.push(`campaign ${c}: interrupted trial ${s.seq} (${s.params}) never redone`);
    }
  }
  return problems;
}

// The unit's state on the host: spectune's drop-in, the version markers and the kept known-good text, the steps in
// force (as systemd sees the unit), whether it is active, and whether systemd wants a daemon-reload.
export function readUnitState(h, unit) {
  const dropIn = `/etc/systemd/system/${unit}.d/90-spectune.conf`;
  const st = `/var/lib/spectune/${unit}`;
  const out = sshRun(
    h,
    [
      `echo "active=$(systemctl is-active ${unit})"`,
      `echo "reload=$(systemctl show -p NeedDaemonReload --value ${unit})"`,
      `echo "current=$(cat ${st}/current 2>/dev/null)"`,
      `echo "good=$(cat ${st}/good 2>/dev/null)"`,
      `echo "steps=$(systemctl cat ${unit} | grep -o -- '--speculative-num-steps[ =][0-9]*' | tail -1 | grep -o '[0-9]*$')"`,
      `echo "dropin=$(base64 -w0 ${dropIn} 2>/dev/null)"`,
      `g=$(cat ${st}/good 2>/dev/null); echo "goodtext=$( [ -n "$g" ] && [ "$g" != none ] && base64 -w0 ${st}/dropins/$g.conf 2>/dev/null)"`,
      `echo "versions=$(ls ${st}/dropins 2>/dev/null | tr '\\n' ' ')"`,
      `echo "tmp=$(ls -a /etc/systemd/system/${unit}.d 2>/dev/null | grep -c spectune- )"`,
      `echo "prov=$(cat ${st}/provisional 2>/dev/null)"`,
      `echo "runtrial=$(test -e /run/systemd/system/${unit}.d/90-spectune.trial.conf && echo yes)"`,
    ].join('; '),
  );
  const kv = Object.fromEntries(
    out
      .trim()
      .split('\n')
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  const b64 = (s) => (s ? Buffer.from(s, 'base64').toString('utf8') : null);
  // A candidate that ran provisionally (from /run) and whose runtime drop-in is gone (a reboot wiped /run) no longer
  // runs: the known-good config is in force whatever `current` still says (src/service/deploy.ts readVersions).
  const lapsed = kv.current && kv.prov === kv.current && kv.runtrial !== 'yes';
  return {
    active: kv.active,
    needReload: kv.reload === 'yes',
    current: lapsed ? kv.good || null : kv.current || null,
    good: kv.good || null,
    steps: kv.steps ? Number(kv.steps) : null,
    dropIn: b64(kv.dropin),
    goodText: b64(kv.goodtext),
    versions: (kv.versions || '').trim().split(/\s+/).filter(Boolean),
    tempFiles: Number(kv.tmp || 0),
  };
}

// Whether the unit is on its known-good config: the drop-in is exactly the kept known-good version (or absent when
// that is the operator's own config), current = good, no half-written temp file, systemd reloaded, unit active.
export function knownGoodProblems(s) {
  const p = [];
  if (s.active !== 'active') p.push(`unit is ${s.active}`);
  if (s.needReload) p.push('systemd needs a daemon-reload (the drop-in on disk is not the one in force)');
  if (s.tempFiles) p.push(`${s.tempFiles} half-written temp file(s) next to the drop-in`);
  if (s.good !== null && s.current !== s.good) p.push(`current version ${s.current} is not the known-good ${s.good}`);
  const expected = s.good === null || s.good === 'none' ? null : s.goodText;
  if (s.good !== null && s.good !== 'none' && s.goodText === null) p.push(`known-good version ${s.good} is not kept`);
  else if (s.dropIn !== expected) p.push(`drop-in is not the known-good version ${s.good}`);
  return p;
}

// Whether a drop-in on disk is a whole kept version (or absent): never a half-applied one.
export function dropInWhole(h, unit, s) {
  if (s.dropIn === null) return true;
  const st = `/var/lib/spectune/${unit}/dropins`;
  return s.versions.some((v) => {
    try {
      return sshRun(h, `cat ${st}/${v}`) === s.dropIn;
    } catch {
      return false;
    }
  });
}

// The health endpoint's status code (0 when it does not answer).
export async function healthCode(h, port) {
  try {
    return (await fetch(`http://${h.ip}:${port}/health`, { signal: AbortSignal.timeout(5000) })).status;
  } catch {
    return 0;
  }
}

// Which part of a trial an event says spectune is in (the kill point's class), or null for events that say nothing.
export function classify(e, current) {
  if (e.type === 'service:action') {
    if (e.action === 'deploy') return 'deploy';
    if (e.action === 'restart') return current === 'rollback' ? 'rollback' : 'restart';
    if (e.action === 'rollback' || e.action === 'stop') return 'rollback';
  }
  if (e.type === 'trial:phase') {
    if (e.phase === 'deploy' || e.phase === 'feasibility' || e.phase === 'plan') return 'deploy';
    if (e.phase === 'wait-ready') return 'readiness';
    if (e.phase === 'warmup' || e.phase === 'bench' || e.phase === 'soak') return 'benchmark';
    if (e.phase === 'rollback') return 'rollback';
    if (e.phase === 'record') return 'store write';
  }
  if (e.type === 'service:state') return current === 'rollback' ? 'rollback' : 'readiness';
  if (e.type === 'service:ready') return current === 'rollback' ? 'rollback' : 'readiness';
  if (e.type === 'bench:progress' || e.type === 'bench:level') return 'benchmark';
  if (e.type === 'trial:end' || e.type === 'campaign:best' || e.type === 'trial:start') return 'store write';
  if (e.type === 'log' && /drop-in version \d+ installed/.test(e.message)) return 'deploy';
  return null;
}
