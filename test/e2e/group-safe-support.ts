// Support of the group-safety e2e tests: a two-rank SIMULATED SGLang (rank0 on th1, rank1 on th2) whose rank1 can be
// cut off the network without touching other tests: spectune reaches th2 through an address of its own (an alias on
// th2's eth0, the shared ssh host key), so removing that address cuts spectune's path only; and the relay that stands
// in for the rank-to-rank link drops its connections and holds new ones while the cut lasts.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTestHosts, type TestHost } from './helpers/testhosts.js';
import { BIN, sshRun, type CliRun } from './tune-support.js';
import { installRankUnit, renderRankUnit } from './two-host-support.js';

/** How often the relay retries reaching rank0's dist-init port for a waiting worker (ms). */
const RELAY_RETRY_MS = 100;

/** The rank-to-rank link: pipes rank1 to rank0's store; cut() drops every connection and holds new ones. */
export interface CutRelay {
  server: Server;
  cut(): void;
  restore(): void;
}

// A relay on `listenHost:port` to `target:port` (as two-host-support's, plus the cut).
export function startCutRelay(listenHost: string, target: string, port: number): Promise<CutRelay> {
  let isCut = false;
  const open = new Set<Socket>();
  const held: (() => void)[] = [];
  const server = createServer((down: Socket) => {
    let up: Socket | null = null;
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
          setTimeout(attempt, RELAY_RETRY_MS);
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

/** spectune's own path to rank1: an ssh config naming th2 by an alias address that cut() removes. */
export interface CutPath {
  sshConfig: string;
  cut(): void;
  restore(): void;
  close(): void;
}

// The alias address on th2 (a free one of its /29) and an ssh config for spectune through it (host-key checked
// against th2's own key with HostKeyAlias).
export function openCutPath(rank1: TestHost): CutPath {
  const alias = rank1.ip.replace(/\.\d+$/, '.5');
  const netns = `spectune-${rank1.name}`;
  const ip = (verb: 'add' | 'del') =>
    spawnSync('ip', ['-n', netns, 'addr', verb, `${alias}/29`, 'dev', 'eth0'], { encoding: 'utf8' });
  ip('del');
  const r = ip('add');
  if (r.status !== 0) throw new Error(`ip -n ${netns} addr add ${alias}/29: ${r.stderr}`);
  const shared = readFileSync(rank1.sshConfig, 'utf8');
  const sshConfig = join(mkdtempSync(join(tmpdir(), 'spectune-group-safe-ssh-')), 'config');
  writeFileSync(
    sshConfig,
    shared.replace(`HostName ${rank1.ip}\n`, `HostName ${alias}\n  HostKeyAlias ${rank1.name}\n`),
  );
  return {
    sshConfig,
    cut() {
      ip('del');
    },
    restore() {
      ip('add');
    },
    close() {
      ip('del');
    },
  };
}

/** The two-rank group of these tests, with its cuttable paths. */
export interface CutGroup {
  rank0: TestHost;
  rank1: TestHost;
  relay: CutRelay;
  path: CutPath;
  config: string;
  dir: string;
}

// Install and start both ranks fresh and write the group's spectune.yaml (lease 60 s, a short grid).
export async function startCutGroup(unit: string, port: number, distPort: number, trials = 4): Promise<CutGroup> {
  const hosts = loadTestHosts();
  const rank0 = hosts.find((h) => h.name === 'th1')!;
  const rank1 = hosts.find((h) => h.name === 'th2')!;
  const relay = await startCutRelay(rank1.hostIp, rank0.ip, distPort);
  installRankUnit(rank0, unit, renderRankUnit(unit, port, 0, `${rank0.ip}:${distPort}`));
  installRankUnit(rank1, unit, renderRankUnit(unit, port, 1, `${rank1.hostIp}:${distPort}`));
  sshRun(rank0, `systemctl start ${unit}`);
  sshRun(rank1, `systemctl start ${unit}`);
  const dir = mkdtempSync(join(tmpdir(), 'spectune-group-safe-'));
  const config = join(dir, 'spectune.yaml');
  writeFileSync(
    config,
    [
      'target:',
      '  engine: sglang',
      `  endpoint: http://${rank0.ip}:${port}`,
      '  manager: systemd',
      '  lease: 60s',
      '  hosts:',
      `    - { host: ${rank0.name}, unit: ${unit}, role: rank0 }`,
      `    - { host: ${rank1.name}, unit: ${unit}, role: rank1 }`,
      'space:',
      '  speculative_num_steps: { values: [3, 4, 5] }',
      'search: { strategy: grid, noiseMargin: 4%, repeats: 1, soak: { repeats: 0 } }',
      'objective: { metric: decodeTokensPerSec.mean, concurrency: 1 }',
      'benchmark: { concurrency: [1], requests: 3, inputTokens: 128, outputTokens: 96, warmup: 1, timeouts: { ready: 120s, firstToken: 30s, stall: 10s, total: 60s } }',
      `budget: { trials: ${trials}, hours: 1h }`,
      'store: ./tune.db',
      '',
    ].join('\n'),
  );
  return { rank0, rank1, relay, path: openCutPath(rank1), config, dir };
}

// Cut rank1 (spectune's path to it and the rank-to-rank link) for `ms`; resolves when it is back.
export function cutRank1(g: CutGroup, ms: number): Promise<void> {
  g.path.cut();
  g.relay.cut();
  return new Promise((done) =>
    setTimeout(() => {
      g.path.restore();
      g.relay.restore();
      done();
    }, ms),
  );
}

// Remove both units, the alias and the relay.
export async function stopCutGroup(g: CutGroup | undefined, unit: string): Promise<void> {
  if (!g) return;
  g.path.close();
  g.relay.restore();
  for (const h of [g.rank0, g.rank1]) {
    sshRun(
      h,
      `systemctl stop spectune-lease-${unit.replace(/\.service$/, '')}.timer ${unit} 2>/dev/null; rm -rf /etc/systemd/system/${unit} /etc/systemd/system/${unit}.d /run/systemd/system/${unit}.d /run/spectune/${unit} /var/lib/spectune/${unit}; systemctl daemon-reload; systemctl reset-failed ${unit} 2>/dev/null; true`,
    );
  }
  await new Promise((r) => g.relay.server.close(r));
}

// Run the built CLI; `onEvent(e, child)` sees every progress event as it comes (and may signal the child).
export function runCliWatched(
  args: string[],
  onEvent?: (e: Record<string, unknown>, child: ChildProcess) => void,
): Promise<CliRun> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, SPECTUNE_ACTION_LOG: join(mkdtempSync(join(tmpdir(), 'spectune-actions-')), 'a.jsonl') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let partial = '';
    const events: Record<string, unknown>[] = [];
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
        onEvent?.(e, child);
      }
    });
    child.on('close', (code, signal) => done({ code, signal, stdout, stderr, events }));
  });
}

/** One rank as the test reads it from the host (never through spectune). */
export interface RankState {
  active: string;
  mainPid: number;
  nRestarts: number;
  current: string;
  good: string;
  trial: boolean;
  /** spectune's /etc drop-in, and the kept copy of the known-good version ('' when absent). */
  dropIn: string;
  goodText: string;
}

// Read one rank's state on its host.
export function readRank(h: TestHost, unit: string): RankState {
  const st = `/var/lib/spectune/${unit}`;
  const out = sshRun(
    h,
    [
      `echo "active=$(systemctl show -p ActiveState --value ${unit})"`,
      `echo "pid=$(systemctl show -p MainPID --value ${unit})"`,
      `echo "nrestarts=$(systemctl show -p NRestarts --value ${unit})"`,
      `echo "current=$(cat ${st}/current 2>/dev/null)"`,
      `echo "good=$(cat ${st}/good 2>/dev/null)"`,
      `echo "trial=$(test -e /run/systemd/system/${unit}.d/90-spectune.trial.conf && echo yes)"`,
      `echo "dropin=$(base64 -w0 /etc/systemd/system/${unit}.d/90-spectune.conf 2>/dev/null)"`,
      `g=$(cat ${st}/good 2>/dev/null); echo "goodtext=$( [ -n "$g" ] && [ "$g" != none ] && base64 -w0 ${st}/dropins/$g.conf 2>/dev/null)"`,
    ].join('; '),
  );
  const kv = Object.fromEntries(
    out
      .trim()
      .split('\n')
      .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
  );
  const b64 = (s: string | undefined) => (s ? Buffer.from(s, 'base64').toString('utf8') : '');
  return {
    active: kv.active,
    mainPid: Number(kv.pid),
    nRestarts: Number(kv.nrestarts),
    current: kv.current,
    good: kv.good,
    trial: kv.trial === 'yes',
    dropIn: b64(kv.dropin),
    goodText: b64(kv.goodtext),
  };
}

// A drop-in with the rank's own flags masked (they differ by design: --node-rank and where it finds rank0).
export function maskRank(text: string): string {
  return text.replace(/--node-rank[ =]\d+/g, '--node-rank N').replace(/--dist-init-addr[ =]\S+/g, '--dist-init-addr A');
}

// The problems with the group now: each rank must run its known-good (current = good, no candidate, the drop-in in
// force byte-equal to the kept known-good copy), both the same config but for the rank flags, both active, rank0 healthy.
export async function groupProblems(g: CutGroup, unit: string, port: number): Promise<string[]> {
  const [a, b] = [readRank(g.rank0, unit), readRank(g.rank1, unit)];
  const p: string[] = [];
  for (const [name, s] of [
    ['rank0', a],
    ['rank1', b],
  ] as const) {
    if (s.active !== 'active') p.push(`${name} is ${s.active}`);
    if (s.trial) p.push(`${name} still runs a candidate (runtime drop-in)`);
    if ((s.current || 'none') !== (s.good || 'none'))
      p.push(`${name} current ${s.current} is not known-good ${s.good}`); // no marker: the unit's own config
    if (s.dropIn !== s.goodText) p.push(`${name}: the drop-in in force is not the kept known-good version ${s.good}`);
  }
  if (maskRank(a.dropIn) !== maskRank(b.dropIn))
    p.push(`the ranks run different configs:\n${a.dropIn}\n---\n${b.dropIn}`);
  const health = await fetch(`http://${g.rank0.ip}:${port}/health`, { signal: AbortSignal.timeout(5000) }).then(
    (r) => r.status,
    () => 0,
  );
  if (health !== 200) p.push(`rank0 /health answered ${health}`);
  return p;
}

// Wait (up to ms) until the group has no problems; returns the last problems (empty: fine).
export async function settledGroupProblems(g: CutGroup, unit: string, port: number, ms: number): Promise<string[]> {
  const until = Date.now() + ms;
  for (;;) {
    const p = await groupProblems(g, unit, port);
    if (!p.length || Date.now() > until) return p;
    await new Promise((r) => setTimeout(r, 2000));
  }
}
