// Support of the two-host tune e2e test: a SIMULATED two-node SGLang (rank0 on one test host, rank1 on another) and
// the TCP relay that stands in for the network between them (test hosts reach only this machine).
import { createServer, connect, type Server, type Socket } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTestHosts, type TestHost } from './helpers/testhosts.js';
import { PROFILE, START_STEPS, TIME_SCALE, removeSimUnit, sshRun } from './tune-support.js';

/** How often the relay retries reaching rank0's dist-init port for a waiting worker (ms). */
const RELAY_RETRY_MS = 100;

// The unit text of one rank of the simulated two-node engine; `distAddr` is where this rank finds rank0's store.
export function renderRankUnit(unit: string, port: number, rank: number, distAddr: string): string {
  return [
    '[Unit]',
    `Description=${unit}: SIMULATED SGLang rank ${rank} of 2 (spectune sim) for the two-host tune e2e test`,
    '',
    '[Service]',
    `ExecStart=/usr/local/bin/node /opt/spectune/bin/spectune.js sim --sim-profile ${PROFILE} --sim-time-scale ${TIME_SCALE} --model-path Qwen/Qwen3.5-122B-A10B-FP8 --host 0.0.0.0 --port ${port} --tp-size 2 --nnodes 2 --node-rank ${rank} --dist-init-addr ${distAddr} --speculative-algorithm EAGLE --speculative-num-steps ${START_STEPS} --speculative-eagle-topk 1`,
    'Restart=always',
    'RestartSec=1',
    'TimeoutStopSec=20',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}

// Install one rank's unit fresh (no spectune drop-in, no version history), not started.
export function installRankUnit(h: TestHost, unit: string, text: string): void {
  sshRun(h, `systemctl stop ${unit} 2>/dev/null; rm -rf /etc/systemd/system/${unit}.d /var/lib/spectune/${unit}; true`);
  sshRun(h, `cat > /etc/systemd/system/${unit}`, text);
  sshRun(h, `systemctl daemon-reload && systemctl reset-failed ${unit} 2>/dev/null; true`);
}

// The drop-in versions spectune wrote for the unit: version number -> text.
export function readDropInVersions(h: TestHost, unit: string): Map<number, string> {
  const dir = `/var/lib/spectune/${unit}/dropins`;
  const out = new Map<number, string>();
  for (const name of sshRun(h, `ls -1 ${dir} 2>/dev/null; true`)
    .split('\n')
    .filter((n) => /^\d+\.conf$/.test(n))) {
    out.set(Number(name.slice(0, -5)), sshRun(h, `cat ${dir}/${name}`));
  }
  return out;
}

// The unit's active state ("active", "failed"...).
export function unitActiveState(h: TestHost, unit: string): string {
  return sshRun(h, `systemctl show -p ActiveState --value ${unit}`).trim();
}

// A TCP relay on `listenHost:port` to `target:port` that holds each accepted worker connection until rank0 listens
// (as a worker's own connect retries would), then pipes both ways; either side closing closes the other.
export function startDistRelay(listenHost: string, target: string, port: number): Promise<Server> {
  const server = createServer((down: Socket) => {
    let up: Socket | null = null;
    let closed = false;
    down.on('error', () => undefined);
    down.on('close', () => {
      closed = true;
      up?.destroy();
    });
    const attempt = () => {
      if (closed) return;
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
          setTimeout(attempt, RELAY_RETRY_MS);
        }
      });
    };
    attempt();
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, listenHost, () => resolve(server));
  });
}

// Write the tune config of the two-host target (rank0 serves the endpoint) into a fresh temp dir.
export function writeTwoHostConfig(rank0: TestHost, rank1: TestHost, unit: string, port: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'spectune-tune-2h-'));
  const config = join(dir, 'spectune.yaml');
  writeFileSync(
    config,
    [
      'target:',
      '  engine: sglang',
      `  endpoint: http://${rank0.ip}:${port}`,
      '  manager: systemd',
      '  hosts:',
      `    - { host: ${rank0.name}, unit: ${unit}, role: rank0 }`,
      `    - { host: ${rank1.name}, unit: ${unit}, role: rank1 }`,
      'space:',
      '  speculative_num_steps: { values: [3, 4, 10] }',
      'search: { strategy: grid, noiseMargin: 4%, repeats: 1, soak: { repeats: 0 } }',
      'objective: { metric: decodeTokensPerSec.mean, concurrency: 1 }',
      'benchmark: { concurrency: [1], requests: 3, inputTokens: 128, outputTokens: 96, warmup: 1, timeouts: { ready: 120s, firstToken: 30s, stall: 10s, total: 60s } }',
      'budget: { trials: 6, hours: 1h }',
      'store: ./tune.db',
      '',
    ].join('\n'),
  );
  return config;
}

/** A running two-rank group of the simulated engine: rank0 on th1 (the endpoint), rank1 on th2, the relay between. */
export interface TwoRankGroup {
  rank0: TestHost;
  rank1: TestHost;
  relay: Server;
  config: string;
}

// Install and start both ranks' units (rank1 reaches rank0's dist-init port through the relay on this machine) and
// write the two-host spectune.yaml.
export async function startTwoRankGroup(unit: string, port: number, distPort: number): Promise<TwoRankGroup> {
  const hosts = loadTestHosts();
  const rank0 = hosts.find((h) => h.name === 'th1')!;
  const rank1 = hosts.find((h) => h.name === 'th2')!;
  const relay = await startDistRelay(rank1.hostIp, rank0.ip, distPort);
  installRankUnit(rank0, unit, renderRankUnit(unit, port, 0, `${rank0.ip}:${distPort}`));
  installRankUnit(rank1, unit, renderRankUnit(unit, port, 1, `${rank1.hostIp}:${distPort}`));
  sshRun(rank0, `systemctl start ${unit}`);
  sshRun(rank1, `systemctl start ${unit}`);
  return { rank0, rank1, relay, config: writeTwoHostConfig(rank0, rank1, unit, port) };
}

// Remove both ranks' units and close the relay (whatever part of the group was started).
export async function stopTwoRankGroup(g: TwoRankGroup | undefined, unit: string): Promise<void> {
  if (!g) return;
  removeSimUnit(g.rank0, unit);
  removeSimUnit(g.rank1, unit);
  await new Promise((r) => g.relay.close(r));
}
