// Shared support of the real llama-server e2e tests: the binary and models (built on this machine, seen by the test
// hosts at /opt/llama), systemd units running them on a test host, and one-off requests to them.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestHost } from './helpers/testhosts.js';
import { sshRun } from './tune-support.js';
import { waitHealthy as pollHealthy } from './helpers/health.js';

/** This machine's llama.cpp directory (scripts/llamacpp/build-llama-server.sh) and its path inside the test hosts. */
export const LOCAL_LLAMA_DIR = process.env.SPECTUNE_LLAMA_DIR ?? '/var/lib/spectune-llama';
export const HOST_LLAMA_DIR = '/opt/llama';
export const HOST_BIN = `${HOST_LLAMA_DIR}/bin/llama-server`;
/** The test host these tests use (th1/th2 carry the other e2e suites). */
export const LLAMA_TEST_HOST = 'th3';
/** One thread: on two cores shared with the rest of the suite, -t 2 spins in ggml's barrier whenever the other
 *  thread is preempted (measured on th3 under load: 3 tok/s at -t 2, 28 tok/s at -t 1, perfect pair, n-max 8). */
export const THREADS = 1;

/** The generated pairs (scripts/llamacpp/make-models.mjs): same 1-layer draft, two targets. */
export const PAIRS = {
  perfect: { target: 'target-8L.gguf', deadScale: 0 },
  poor: { target: 'target-8L-poor.gguf', deadScale: 0.1 },
} as const;
export type PairName = keyof typeof PAIRS;
export const DRAFT = 'draft-1L.gguf';

// Fail (never skip) when the binary or a model is missing: the e2e project's command builds them.
export function requireLlamaFiles(): void {
  const need = [
    join(LOCAL_LLAMA_DIR, 'bin', 'llama-server'),
    join(LOCAL_LLAMA_DIR, 'models', DRAFT),
    ...Object.values(PAIRS).map((p) => join(LOCAL_LLAMA_DIR, 'models', p.target)),
  ];
  const missing = need.filter((f) => !existsSync(f));
  if (missing.length) {
    throw new Error(
      `real llama-server e2e: missing ${missing.join(', ')}; build with \`bash scripts/llamacpp/build-llama-server.sh\` and \`node scripts/llamacpp/make-models.mjs\` (npm test does both)`,
    );
  }
}

// Fail when the test host does not see /opt/llama (booted before the directory existed: re-run up-all.sh); give it
// the shared libraries the binary links that its minimal rootfs lacks (libgomp1: same Debian release as this machine).
export function requireHostLlama(h: TestHost): void {
  const out = sshRun(h, `test -x ${HOST_BIN} && echo ok || echo missing`).trim();
  if (out !== 'ok')
    throw new Error(
      `${h.name}: ${HOST_BIN} is not visible; the host was booted before ${LOCAL_LLAMA_DIR} existed (sudo bash scripts/testhost/up-all.sh)`,
    );
  const missing = sshRun(h, `ldd ${HOST_BIN} | awk '/not found/ {print $1}'`).split('\n').filter(Boolean);
  for (const lib of missing) {
    const local = spawnSync('sh', ['-c', `ldconfig -p | awk '$1 == "${lib}" && /x86-64/ {print $NF; exit}'`], {
      encoding: 'utf8',
    }).stdout.trim();
    if (!local) throw new Error(`${h.name}: ${HOST_BIN} needs ${lib}, which this machine lacks too`);
    const r = spawnSync('ssh', ['-F', h.sshConfig, h.name, `cat > /usr/local/lib/${lib} && ldconfig`], {
      input: readFileSync(local),
      timeout: 60_000,
    });
    if (r.status !== 0) throw new Error(`${h.name}: copying ${lib} failed: ${r.stderr}`);
  }
  const still = sshRun(h, `ldd ${HOST_BIN} | grep 'not found'; true`).trim();
  if (still) throw new Error(`${h.name}: ${HOST_BIN} cannot load: ${still}`);
}

// The model path of a file as the test host sees it.
export function hostModel(file: string): string {
  return `${HOST_LLAMA_DIR}/models/${file}`;
}

// llama-server flags of a pair with draft-model speculation at a given --spec-draft-n-max.
export function speculativeArgs(pair: PairName, nMax: number, port: number): string[] {
  return [
    '-m',
    hostModel(PAIRS[pair].target),
    '-md',
    hostModel(DRAFT),
    '--spec-type',
    'draft-simple',
    '--spec-draft-n-max',
    String(nMax),
    ...serveArgs(port),
  ];
}

// Listen address, context, threads and one slot: identical for every unit of these tests.
export function serveArgs(port: number): string[] {
  return ['--host', '0.0.0.0', '--port', String(port), '-c', '2048', '-t', String(THREADS), '-np', '1'];
}

/** Unit options of a test. */
export interface LlamaUnitOptions {
  timeoutStopSec?: number;
  /** systemd Restart= (default no: a failure stays one failure in the journal). */
  restart?: 'no' | 'on-failure' | 'always';
  /** systemd Nice=: a measured service gets the CPU before the rest of the suite (as on a dedicated box). */
  nice?: number;
}

// The unit file an operator would write for llama-server.
export function renderLlamaUnit(unit: string, args: string[], opts: LlamaUnitOptions = {}): string {
  return [
    '[Unit]',
    `Description=${unit}: real llama-server for the spectune e2e tests`,
    '',
    '[Service]',
    'Type=simple',
    ...(opts.nice === undefined ? [] : [`Nice=${opts.nice}`]),
    `ExecStart=${HOST_BIN} ${args.join(' ')}`,
    `Restart=${opts.restart ?? 'no'}`,
    'RestartSec=1',
    `TimeoutStopSec=${opts.timeoutStopSec ?? 20}`,
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}

// Install a unit fresh (no drop-in, no spectune state), optionally start it.
export function installLlamaUnit(
  h: TestHost,
  unit: string,
  args: string[],
  opts: LlamaUnitOptions & { start?: boolean } = {},
): void {
  removeLlamaUnit(h, unit);
  sshRun(h, `cat > /etc/systemd/system/${unit}`, renderLlamaUnit(unit, args, opts));
  sshRun(h, `systemctl daemon-reload && systemctl reset-failed ${unit} 2>/dev/null; true`);
  if (opts.start !== false) sshRun(h, `systemctl start ${unit}`);
}

// Stop and remove a unit with its drop-ins and spectune's state for it.
export function removeLlamaUnit(h: TestHost, unit: string): void {
  sshRun(
    h,
    `systemctl kill -s KILL ${unit} 2>/dev/null; systemctl stop ${unit} 2>/dev/null; rm -rf /etc/systemd/system/${unit} /etc/systemd/system/${unit}.d /var/lib/spectune/${unit}; systemctl daemon-reload; systemctl reset-failed ${unit} 2>/dev/null; true`,
  );
}

// Wait until /health answers 200 (llama-server says 503 while loading).
export function waitLlamaHealthy(endpoint: string, timeoutMs = 120_000): Promise<void> {
  return pollHealthy(endpoint, timeoutMs);
}

/** What one non-streaming completion's `timings` say. */
export interface Timings {
  predicted_per_second: number;
  draft_n?: number;
  draft_n_accepted?: number;
}

// One non-streaming completion (temperature 0, fixed length); resolves with the server's timings.
export async function completeOnce(endpoint: string, tokens: number, signal?: AbortSignal): Promise<Timings> {
  const res = await fetch(`${endpoint}/completion`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    signal,
    body: JSON.stringify({
      prompt: 'Tell me a story.',
      n_predict: tokens,
      temperature: 0,
      ignore_eos: true,
      stream: false,
    }),
  });
  if (res.status !== 200) throw new Error(`${endpoint}/completion: HTTP ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { timings: Timings }).timings;
}

// The host's current time for `journalctl --since=@...`.
export function hostEpoch(h: TestHost): string {
  return `@${sshRun(h, 'date +%s').trim()}`;
}
