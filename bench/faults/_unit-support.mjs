// Shared support of the disk-full and two-operators fault modules: the test hosts, a SIMULATED sglang unit on one,
// the built CLI run as a user runs it, and the unit's state judged from the host (known-good or not).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = join(ROOT, 'bin/spectune.js');
/** The seed's two-node profile at a time scale that turns its ~100 s load into ~2 s (as the e2e tests). */
const PROFILE = 'qwen3.5-122b-a10b-2node';
const TIME_SCALE = 0.02;

// The booted test hosts (scripts/testhost/up-all.sh), or null with why not.
export function loadHosts() {
  const env = process.env.SPECTUNE_TESTHOSTS_ENV;
  if (!env)
    return {
      hosts: null,
      why: 'SPECTUNE_TESTHOSTS_ENV is not set (boot the test hosts: sudo bash scripts/testhost/up-all.sh)',
    };
  const json = join(dirname(env), 'hosts.json');
  if (!existsSync(json)) return { hosts: null, why: `no ${json}: the test hosts are not up` };
  return { hosts: JSON.parse(readFileSync(json, 'utf8')).hosts, why: null };
}

// Run a shell script on a test host; throws with stderr on failure unless `ok` says otherwise.
export function ssh(h, script, { input, check = true, timeout = 120_000 } = {}) {
  const r = spawnSync('ssh', ['-F', h.sshConfig, h.name, script], { input, encoding: 'utf8', timeout });
  if (check && r.status !== 0) throw new Error(`ssh ${h.name} ${script.slice(0, 80)}: exit ${r.status}: ${r.stderr}`);
  return r;
}

// Install the simulated unit fresh (no drop-in, no history, no lock) and start it.
export function installSimUnit(h, unit, port) {
  const text = [
    '[Unit]',
    `Description=${unit}: SIMULATED SGLang (spectune sim) for the fault suite`,
    '',
    '[Service]',
    `ExecStart=/usr/local/bin/node /opt/spectune/bin/spectune.js sim --sim-profile ${PROFILE} --sim-time-scale ${TIME_SCALE} --model-path Qwen/Qwen3.5-122B-A10B-FP8 --host 0.0.0.0 --port ${port} --tp-size 2 --speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1`,
    'Restart=always',
    'RestartSec=1',
    'TimeoutStopSec=20',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
  ssh(h, `systemctl stop ${unit} 2>/dev/null; rm -rf /etc/systemd/system/${unit}.d /var/lib/spectune/${unit}; true`);
  ssh(h, `cat > /etc/systemd/system/${unit}`, { input: text });
  ssh(h, `systemctl daemon-reload && systemctl reset-failed ${unit} 2>/dev/null; systemctl restart ${unit}`);
}

// Remove the unit and everything spectune left for it.
export function removeSimUnit(h, unit) {
  ssh(
    h,
    `systemctl stop ${unit} 2>/dev/null; rm -rf /etc/systemd/system/${unit} /etc/systemd/system/${unit}.d /var/lib/spectune/${unit}; systemctl daemon-reload; systemctl reset-failed ${unit} 2>/dev/null; true`,
    { check: false },
  );
}

// The unit as the host has it: active, healthy, and on the version spectune last marked good.
export async function readUnitState(h, unit, port) {
  const r = ssh(
    h,
    `systemctl is-active ${unit}; cat /var/lib/spectune/${unit}/current 2>/dev/null || echo none; cat /var/lib/spectune/${unit}/good 2>/dev/null || echo none; test -e /var/lib/spectune/${unit}/lock && echo locked || echo unlocked`,
    { check: false },
  );
  const [active, current, good, lock] = r.stdout.trim().split('\n');
  let healthy = false;
  for (let i = 0; i < 60 && !healthy; i++) {
    healthy = await fetch(`http://${h.ip}:${port}/health`, { signal: AbortSignal.timeout(2000) }).then(
      (x) => x.status === 200,
      () => false,
    );
    if (!healthy) await new Promise((res) => setTimeout(res, 500));
  }
  return { active, current, good, lock, healthy, knownGood: active === 'active' && healthy && current === good };
}

// A tune config for the unit; `host` null means "this machine" (the client runs on the test host itself).
export function tuneConfigText({ host, endpoint, unit, store, trials }) {
  return [
    'target:',
    '  engine: sglang',
    `  endpoint: ${endpoint}`,
    '  manager: systemd',
    '  hosts:',
    host ? `    - host: ${host}\n      unit: ${unit}` : `    - unit: ${unit}`,
    'space:',
    '  speculative_num_steps: { min: 1, max: 10 }',
    'search: { strategy: adaptive, noiseMargin: 4%, repeats: 1 }',
    'objective: { metric: decodeTokensPerSec.mean, concurrency: 1 }',
    'benchmark: { concurrency: [1], requests: 3, inputTokens: 64, outputTokens: 96, warmup: 1, timeouts: { ready: 120s, firstToken: 30s, stall: 10s, total: 60s } }',
    `budget: { trials: ${trials}, hours: 1h }`,
    `store: ${store}`,
    '',
  ].join('\n');
}

// Write a config into a fresh temp dir on this machine.
export function writeLocalConfig(opts) {
  const dir = mkdtempSync(join(tmpdir(), 'spectune-faults-'));
  const config = join(dir, 'spectune.yaml');
  writeFileSync(config, tuneConfigText({ store: join(dir, 'tune.db'), ...opts }));
  return { dir, config };
}

// Run a command (argv) as a child; NDJSON progress events on stderr are parsed; `onEvent(e, child)` may act on them;
// `onSpawn(child)` gets the child as soon as it exists.
export function runArgv(argv, { env = {}, onEvent, onSpawn, cwd } = {}) {
  return new Promise((done) => {
    const child = spawn(argv[0], argv.slice(1), {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    onSpawn?.(child);
    let stdout = '';
    let stderr = '';
    let partial = '';
    const events = [];
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
      const lines = (partial + d.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const l of lines) {
        let e = null;
        try {
          e = JSON.parse(l);
        } catch {
          continue;
        }
        events.push(e);
        onEvent?.(e, child);
      }
    });
    child.on('close', (code, signal) => done({ code, signal, stdout, stderr, events }));
  });
}

// The built CLI on this machine.
export function runCli(args, opts = {}) {
  return runArgv([process.execPath, BIN, ...args], opts);
}

// The stderr lines that are not NDJSON events (what an operator reads).
export function plainLines(stderr) {
  return stderr.split('\n').filter((l) => l.trim() && !l.startsWith('{'));
}

// A one-line refusal: exactly one plain line, starting "spectune: ", no stack trace.
export function isOneLine(stderr, pattern) {
  const lines = plainLines(stderr);
  return lines.length === 1 && pattern.test(lines[0]) && !/\n\s+at /.test(stderr);
}

// The project's seeded PRNG (mulberry32), so a run's random points can be replayed from the seed it prints.
export { createRandom as seeded } from '../../dist/random.js';
