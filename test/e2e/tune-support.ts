// Shared support of the tune end-to-end tests: a SIMULATED sglang unit on a real systemd test host, the built CLI,
// and the sim's own model for the true optimum.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { TestHost } from './helpers/testhosts.js';

/** The project root and its built CLI (tests run the build, as users do). */
export const ROOT = resolve(import.meta.dirname, '../..');
export const BIN = join(ROOT, 'bin/spectune.js');
/** The seed's profile, and a time scale that turns its ~100 s load into ~2 s. */
export const PROFILE = 'qwen3.5-122b-a10b-2node';
export const TIME_SCALE = 0.02;

// Run a command on a test host over its ssh config; throws with stderr on failure.
export function sshRun(h: TestHost, script: string, input?: string): string {
  const r = spawnSync('ssh', ['-F', h.sshConfig, h.name, script], { input, encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0) throw new Error(`ssh ${h.name} ${script}: exit ${r.status}: ${r.stderr}`);
  return r.stdout;
}

/** The operator's config before tuning: steps=3 (the seed's third measurement), so the climb meets the plateau at 4-6. */
export const START_STEPS = 3;

// The unit text of the simulated engine as an operator would write it.
export function renderSimUnit(unit: string, port: number): string {
  return [
    '[Unit]',
    `Description=${unit}: SIMULATED SGLang (spectune sim) for the tune e2e tests`,
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

// Install the unit fresh (no spectune drop-in, no version history) and start it.
export function installSimUnit(h: TestHost, unit: string, port: number): void {
  sshRun(
    h,
    `systemctl stop ${leaseTimer(unit)} ${unit} 2>/dev/null; rm -rf /etc/systemd/system/${unit}.d /run/systemd/system/${unit}.d /run/spectune/${unit} /var/lib/spectune/${unit}; true`,
  );
  sshRun(h, `cat > /etc/systemd/system/${unit}`, renderSimUnit(unit, port));
  sshRun(h, `systemctl daemon-reload && systemctl reset-failed ${unit} 2>/dev/null; systemctl restart ${unit}`);
}

// Remove the unit and everything spectune left for it.
export function removeSimUnit(h: TestHost, unit: string): void {
  sshRun(
    h,
    `systemctl stop ${leaseTimer(unit)} ${unit} 2>/dev/null; rm -rf /etc/systemd/system/${unit} /etc/systemd/system/${unit}.d /run/systemd/system/${unit}.d /run/spectune/${unit} /var/lib/spectune/${unit}; systemctl daemon-reload; systemctl reset-failed ${unit} 2>/dev/null; true`,
  );
}

// The transient timer of a unit's commit-confirmed lease (stopped with the unit in cleanups).
function leaseTimer(unit: string): string {
  return `spectune-lease-${unit.replace(/\.service$/, '')}.timer`;
}

// The speculative_num_steps in force on the host (from the unit as systemd sees it).
export function readStepsInForce(h: TestHost, unit: string): number | null {
  const text = sshRun(h, `systemctl cat ${unit}`);
  const all = [...text.matchAll(/--speculative-num-steps[ =](\d+)/g)];
  return all.length ? Number(all[all.length - 1][1]) : null;
}

// Write a tune config for the unit into a fresh temp dir; returns its path.
export function writeTuneConfig(h: TestHost, unit: string, port: number, extra = ''): { dir: string; config: string } {
  const dir = mkdtempSync(join(tmpdir(), 'spectune-tune-e2e-'));
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
      'budget: { trials: 12, hours: 1h }',
      `store: ./tune.db`,
      extra,
      '',
    ].join('\n'),
  );
  return { dir, config };
}

/** The outcome of one CLI run. */
export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  events: Record<string, unknown>[];
  stderr: string;
}

// Run the built CLI; `killWhen` may send it `sig` (SIGKILL by default) once, when an event matches (the resume tests),
// and again `againAfterMs` later (a second Ctrl-C).
export function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  killWhen?: (e: Record<string, unknown>) => boolean,
  sig: NodeJS.Signals = 'SIGKILL',
  againAfterMs?: number,
): Promise<CliRun> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let partial = '';
    const events: Record<string, unknown>[] = [];
    let sent = false;
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d;
      const lines = (partial + d.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const l of lines) {
        let e: Record<string, unknown> | null = null;
        try {
          e = JSON.parse(l) as Record<string, unknown>;
        } catch {
          continue;
        }
        events.push(e);
        if (!sent && killWhen?.(e)) {
          sent = true;
          child.kill(sig);
          if (againAfterMs !== undefined) setTimeout(() => child.kill(sig), againAfterMs);
        }
      }
    });
    child.on('close', (code, signal) => done({ code, signal, stdout, stderr, events }));
  });
}
