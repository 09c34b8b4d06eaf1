// Fault: secrets in the service's configuration (issue 11 item 7). A real campaign on a test host whose SIMULATED
// SGLang unit carries an API key in ExecStart, tokens in Environment= (unit and an operator drop-in) and in an
// EnvironmentFile, plus bench/diagnose/status/logs/report runs with a key in --api-key, a password in a URL's user
// info and a token in its query. Then every artifact is searched for every secret value: the files the campaign
// wrote (the store dumped table by table, and its raw bytes), the reports (Markdown, HTML, JSON), the action log,
// stdout/stderr of every command (events included). trials = artifacts checked; recovered = clean artifacts (no
// secret, and the redaction marker where the artifact must show the redacted flag); lost = artifacts that leak.
// The engine must still receive the real secret: the unit on the host keeps it and the sim accepts only that key.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';

/** The fault's name in the table. */
export const fault = 'secrets';
/** One line for the table's reader. */
export const describe =
  'API keys and tokens in ExecStart, Environment=, EnvironmentFile, URLs, headers: none in any artifact';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'bin/spectune.js');
const UNIT = 'spectune-secrets-e2e.service';
const PORT = 31741;
const ENV_FILE = '/etc/spectune-secrets-e2e.env';
const PROFILE = 'qwen3.5-122b-a10b-2node';
const TIME_SCALE = 0.02;
/** The marker src/redact.ts puts where a secret was. */
const MARKER = '***';

// Fresh secret values for one run, each in the shape operators use.
export function makeSecrets() {
  const hex = (n) => randomBytes(n).toString('hex');
  const alnum = (n) =>
    randomBytes(n * 2)
      .toString('base64')
      .replace(/[^A-Za-z0-9]/g, '')
      .slice(0, n);
  return {
    execApiKey: `sk-exec${hex(12)}`, // --api-key in ExecStart (the sim requires it as the Bearer token)
    hfToken: `hf_${alnum(34)}`, // Environment="HF_TOKEN=..." in the unit
    openaiKey: `sk-proj-${alnum(40)}`, // Environment=OPENAI_API_KEY=... in an operator drop-in
    envFileToken: `tok${hex(16)}`, // HUGGING_FACE_HUB_TOKEN=... in the EnvironmentFile
    envFilePassword: `pw${hex(10)}`, // SGLANG_ADMIN_PASSWORD=... in the EnvironmentFile
    urlPassword: `urlpw${hex(8)}`, // http://operator:PASSWORD@host (bench --url, --endpoint)
    queryToken: `qt${hex(12)}`, // ?token=... in a URL
    wrongKey: `sk-wrong${hex(12)}`, // a bad --api-key (the 401 path)
  };
}

// The test hosts (scripts/testhost/up-all.sh writes hosts.json next to hosts.env).
function loadHosts() {
  const env = process.env.SPECTUNE_TESTHOSTS_ENV || '/var/lib/spectune-testhost/hosts.env';
  const path = join(env, '..', 'hosts.json');
  if (!existsSync(path)) return null;
  return JSON.parse(readFileSync(path, 'utf8')).hosts ?? null;
}

// Run a command on a test host; throws with stderr on failure.
function sshRun(h, script, input) {
  const r = spawnSync('ssh', ['-F', h.sshConfig, h.name, script], { input, encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`ssh ${h.name} ${script.slice(0, 80)}: exit ${r.status}: ${r.stderr}`);
  return r.stdout;
}

// The unit an operator with secrets writes: a key on the command line, a token in Environment=, an env file.
function renderUnit(s) {
  return [
    '[Unit]',
    `Description=${UNIT}: SIMULATED SGLang (spectune sim) with secrets, for the secrets fault`,
    '',
    '[Service]',
    `Environment="HF_TOKEN=${s.hfToken}"`,
    `EnvironmentFile=${ENV_FILE}`,
    `ExecStart=/usr/local/bin/node /opt/spectune/bin/spectune.js sim --sim-profile ${PROFILE} --sim-time-scale ${TIME_SCALE} --model-path Qwen/Qwen3.5-122B-A10B-FP8 --host 0.0.0.0 --port ${PORT} --tp-size 2 --speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 --api-key ${s.execApiKey}`,
    'Restart=always',
    'RestartSec=1',
    'TimeoutStopSec=20',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}

// Install the unit, its env file and an operator drop-in with another key; start it.
function installUnit(h, s) {
  removeUnit(h);
  sshRun(
    h,
    `umask 077; cat > ${ENV_FILE}`,
    `HUGGING_FACE_HUB_TOKEN=${s.envFileToken}\nSGLANG_ADMIN_PASSWORD=${s.envFilePassword}\n`,
  );
  sshRun(h, `cat > /etc/systemd/system/${UNIT}`, renderUnit(s));
  sshRun(
    h,
    `mkdir -p /etc/systemd/system/${UNIT}.d && cat > /etc/systemd/system/${UNIT}.d/10-operator.conf`,
    `[Service]\nEnvironment=OPENAI_API_KEY=${s.openaiKey}\n`,
  );
  sshRun(h, `systemctl daemon-reload && systemctl reset-failed ${UNIT} 2>/dev/null; systemctl restart ${UNIT}`);
}

// Remove the unit and everything spectune and this module left for it.
function removeUnit(h) {
  sshRun(
    h,
    `systemctl stop ${UNIT} 2>/dev/null; rm -rf /etc/systemd/system/${UNIT} /etc/systemd/system/${UNIT}.d /var/lib/spectune/${UNIT} ${ENV_FILE}; systemctl daemon-reload; systemctl reset-failed ${UNIT} 2>/dev/null; true`,
  );
}

// Run the built CLI; resolves with its exit code and output.
function runCli(args, env, cwd) {
  return new Promise((done) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd,
      env: { ...process.env, NO_COLOR: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('close', (code, signal) => done({ args, code, signal, stdout, stderr }));
  });
}

// Wait until the engine answers /health (the sim starts in about a second at this time scale).
async function waitHealthy(h, ms = 60_000) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    try {
      if ((await fetch(`http://${h.ip}:${PORT}/health`)).ok) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`${UNIT} on ${h.name} did not become healthy`);
}

// Every table of a SQLite store as text, row by row.
function dumpStore(path) {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
      .all()
      .map((r) => r.name);
    return tables
      .map(
        (t) =>
          `## ${t}\n${db
            .prepare(`SELECT * FROM "${t.replace(/"/g, '""')}"`)
            .all()
            .map((row) => JSON.stringify(row))
            .join('\n')}`,
      )
      .join('\n');
  } finally {
    db.close();
  }
}

// Every file under a folder (recursively), as [path, bytes].
function filesUnder(dir) {
  return readdirSync(dir, { recursive: true })
    .map(String)
    .map((f) => join(dir, f))
    .filter((p) => statSync(p).isFile())
    .map((p) => [p, readFileSync(p)]);
}

// Drive the campaign and the other commands, collect every artifact; returns { artifacts, checks, notes }.
export async function runScenario({ log = () => {}, host, short = false } = {}) {
  const hosts = loadHosts();
  if (!hosts?.length) return { skipped: 'skipped: test hosts are not up (SPECTUNE_TESTHOSTS_ENV)' };
  const h = host ? hosts.find((x) => x.name === host) : (hosts.find((x) => x.name === 'th3') ?? hosts[0]);
  const s = makeSecrets();
  const dir = mkdtempSync(join(tmpdir(), 'spectune-secrets-'));
  const actionLog = join(dir, 'actions.jsonl');
  const env = { SPECTUNE_ACTION_LOG: actionLog, SPECTUNE_SECRETS_BENCH_KEY: s.execApiKey };
  const target = ['--host', h.name, '--ssh-config', h.sshConfig, '--unit', UNIT];
  const endpoint = `http://operator:${s.urlPassword}@${h.ip}:${PORT}`;
  const runs = [];
  try {
    installUnit(h, s);
    await waitHealthy(h);
    const config = join(dir, 'spectune.yaml');
    writeFileSync(
      config,
      [
        'target:',
        '  engine: sglang',
        `  endpoint: http://${h.ip}:${PORT}`,
        '  apiKeyEnv: SPECTUNE_SECRETS_BENCH_KEY',
        '  manager: systemd',
        '  hosts:',
        `    - host: ${h.name}`,
        `      unit: ${UNIT}`,
        'space:',
        '  speculative_num_steps: { min: 2, max: 5 }',
        'search: { strategy: adaptive, noiseMargin: 4%, repeats: 1, soak: { repeats: 1 } }',
        'objective: { metric: decodeTokensPerSec.mean, concurrency: 1 }',
        'benchmark: { concurrency: [1], requests: 3, inputTokens: 128, outputTokens: 96, warmup: 1, timeouts: { ready: 120s, firstToken: 30s, stall: 10s, total: 60s } }',
        // --short (CI): the baseline and one more trial; each trial deploys, restarts and benchmarks with the secrets.
        `budget: { trials: ${short ? 2 : 3}, hours: 1h }`,
        'store: ./tune.db',
        '',
      ].join('\n'),
    );
    const step = async (args, extraEnv = {}) => {
      const t0 = Date.now();
      const r = await runCli(args, { ...env, ...extraEnv }, dir);
      log(`spectune ${args.slice(0, 2).join(' ')}: exit ${r.code} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      runs.push(r);
      return r;
    };
    const tune = await step(['tune', '-c', config, '--json', '--confirm-probes', '--ssh-config', h.sshConfig]);
    await step(['tune', '-c', config, '--dry-run', '--ssh-config', h.sshConfig]);
    await step(['report', '--db', join(dir, 'tune.db')]);
    await step([
      'report',
      '--db',
      join(dir, 'tune.db'),
      '--html',
      join(dir, 'report.html'),
      '--md',
      join(dir, 'report.md'),
    ]);
    await step(['report', '--db', join(dir, 'tune.db'), '--json']);
    await step([
      'bench',
      '--url',
      `${endpoint}/?token=${s.queryToken}`,
      '--api-key',
      s.execApiKey,
      '--concurrency',
      '1',
      '--requests',
      '2',
      '--output-tokens',
      '8',
      '--input-tokens',
      '32',
      '--json',
    ]);
    await step([
      'bench',
      '--url',
      endpoint,
      '--api-key',
      s.wrongKey,
      '--concurrency',
      '1',
      '--requests',
      '2',
      '--output-tokens',
      '8',
      '--input-tokens',
      '32',
    ]);
    await step(
      [
        'bench',
        '--url',
        `http://${h.ip}:${PORT}`,
        '--concurrency',
        '1',
        '--requests',
        '1',
        '--output-tokens',
        '8',
        '--input-tokens',
        '32',
      ],
      { SPECTUNE_API_KEY: s.execApiKey },
    );
    await step(['status', ...target, '--endpoint', endpoint]);
    await step(['status', ...target, '--endpoint', endpoint, '--json']);
    await step(['diagnose', ...target.filter((x) => x !== '--unit' && x !== UNIT), '--unit', UNIT]);
    await step(['diagnose', ...target.filter((x) => x !== '--unit' && x !== UNIT), '--unit', UNIT, '--json']);
    await step(['logs', ...target]);
    await step(['logs', ...target, '--json']);
    await step(['doctor', ...target, '--endpoint', endpoint, '--json']);
    await step(['apply', ...target, '--set', 'speculative_num_steps=4', '--dry-run']);
    await step(['rollback', ...target, '--dry-run', '--json']);

    // The engine still has the real secrets: the unit keeps them and the sim takes only the real key.
    const unitText = sshRun(h, `systemctl cat ${UNIT}`);
    const show = sshRun(h, `systemctl show -p Environment -p EnvironmentFiles ${UNIT}`);
    const authOk = (
      await fetch(`http://${h.ip}:${PORT}/v1/models`, { headers: { authorization: `Bearer ${s.execApiKey}` } })
    ).status;
    const authBad = (
      await fetch(`http://${h.ip}:${PORT}/v1/models`, { headers: { authorization: `Bearer ${s.wrongKey}` } })
    ).status;
    const engineKeeps = {
      execStart:
        [...unitText.matchAll(/--api-key (\S+)/g)].map((m) => m[1]).every((k) => k === s.execApiKey) &&
        unitText.includes(`--api-key ${s.execApiKey}`),
      environment: show.includes(`HF_TOKEN=${s.hfToken}`) && show.includes(`OPENAI_API_KEY=${s.openaiKey}`),
      environmentFile: show.includes(ENV_FILE),
      authOk,
      authBad,
    };

    // The artifacts: every file the runs wrote (the store dumped and raw), every command's stdout and stderr.
    const artifacts = [];
    for (const [path, bytes] of filesUnder(dir)) {
      if (path === config) continue; // the operator's own config (it names the variable, not the key)
      artifacts.push({ name: `file ${path.slice(dir.length + 1)}`, text: bytes.toString('latin1') });
      if (/\.db$/.test(path))
        artifacts.push({ name: `store dump ${path.slice(dir.length + 1)}`, text: dumpStore(path), store: true });
    }
    for (const r of runs) {
      const what = `spectune ${r.args
        .filter((a) => !a.startsWith('/'))
        .slice(0, 4)
        .join(' ')}`;
      artifacts.push({ name: `${what} stdout`, text: r.stdout }, { name: `${what} stderr`, text: r.stderr });
    }
    return { secrets: s, artifacts, engineKeeps, tune, runs, dir, host: h.name };
  } finally {
    try {
      removeUnit(h);
    } catch (e) {
      log(`cleanup: ${e.message}`);
    }
    // SPECTUNE_KEEP_SECRETS_DIR=1 keeps the folder and every command's output (runs.json) to look into a leak.
    if (process.env.SPECTUNE_KEEP_SECRETS_DIR)
      writeFileSync(join(dir, 'runs.json'), JSON.stringify({ secrets: s, runs }, null, 1));
    else rmSync(dir, { recursive: true, force: true });
  }
}

// Which secrets occur in a text (by name), and whether the redaction marker does.
export function scanArtifact(text, secrets) {
  const leaks = Object.entries(secrets)
    .filter(([, v]) => text.includes(v))
    .map(([k]) => k);
  return { leaks, marked: text.includes(MARKER) };
}

// The row: every artifact scanned for every secret; the marker must be where the key was shown redacted.
export async function run({ short, log }) {
  const sc = await runScenario({ log, short });
  if (sc.skipped) return { trials: 0, recovered: 0, lost: 0, stateAfter: sc.skipped, pass: false };
  const leaking = [];
  for (const a of sc.artifacts) {
    const { leaks } = scanArtifact(a.text, sc.secrets);
    if (leaks.length) leaking.push(`${a.name}: ${leaks.join(', ')}`);
  }
  const problems = [];
  const storeDump = sc.artifacts
    .filter((a) => a.store)
    .map((a) => a.text)
    .join('\n');
  const report = sc.artifacts
    .filter((a) => /report\.(md|html)$/.test(a.name))
    .map((a) => a.text)
    .join('\n');
  if (sc.tune.code !== 0) problems.push(`the campaign failed (exit ${sc.tune.code}): ${sc.tune.stderr.slice(-300)}`);
  if (!storeDump.includes(`--api-key ${MARKER}`))
    problems.push('the store does not show the redacted key (--api-key ***)');
  if (!report.includes('--api-key ${API_KEY}'))
    problems.push('the reports do not show where the key goes (--api-key ${API_KEY})');
  if (!sc.tune.stdout.includes(`--api-key ${MARKER}`)) problems.push('tune --json does not show the redacted key');
  // An endpoint with user info still reaches the engine (the credentials go in a Basic header).
  const status = sc.runs.find((r) => r.args[0] === 'status' && r.args.includes('--json'));
  let healthOk = false;
  try {
    healthOk = JSON.parse(status.stdout).health.ok === true;
  } catch {
    /* no JSON: not ok */
  }
  if (!healthOk)
    problems.push(
      `status with --endpoint http://operator:***@... did not reach the engine: ${status?.stdout.slice(0, 200)}`,
    );
  const k = sc.engineKeeps;
  if (!k.execStart || !k.environment || !k.environmentFile || k.authOk !== 200 || k.authBad !== 401)
    problems.push(`the engine lost its secrets: ${JSON.stringify(k)}`);
  for (const l of leaking) log(`LEAK ${l}`);
  for (const p of problems) log(`PROBLEM ${p}`);
  const trials = sc.artifacts.length + 1;
  const lost = leaking.length + (problems.length ? 1 : 0);
  return {
    trials,
    recovered: trials - lost,
    lost,
    stateAfter: lost
      ? `${leaking.length} leaking artifacts${problems.length ? `; ${problems[0]}` : ''}`
      : `0 secrets in ${sc.artifacts.length} artifacts; engine keeps them`,
    notes: `${Object.keys(sc.secrets).length} secrets, ${sc.artifacts.length} artifacts (store dump + raw files, reports, action log, stdout/stderr of ${sc.runs.length} commands) on ${sc.host}; +1 check: markers present and the engine keeps its secrets`,
  };
}
