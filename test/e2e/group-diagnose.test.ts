// Seeds 1 and 2 played on a two-host group (rank0 on th1, the endpoint; rank1 on th2; the SIMULATED two-node SGLang
// under real systemd), each diagnosed ONCE for the group by live `diagnose -c`: every evidence line names host and
// rank, the worker's NCCL abort is linked to rank 0's end, and `--rank 1` answers for the worker alone.
import { appendFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadTestHosts, type TestHost } from './helpers/testhosts.js';
import { runCli, sshRun } from './tune-support.js';
import {
  installRankUnit,
  renderRankUnit,
  startDistRelay,
  stopTwoRankGroup,
  writeTwoHostConfig,
  type TwoRankGroup,
} from './two-host-support.js';

const UNIT = 'spectune-group-see-e2e.service';
const PORT = 31741;
/** rank0's dist-init port; rank1 reaches it through the relay on this machine. */
const DIST_PORT = 31742;
/** Rank 0's TimeoutStopSec: far shorter than the drain of 16 long answers (the seed-1 trap). */
const RANK0_TIMEOUT_STOP_SEC = 3;
/** Output tokens of each in-flight request: long enough to still stream when the stop times out. */
const LONG_OUTPUT_TOKENS = 20_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Evidence {
  line: number;
  text: string;
  source?: string;
  host?: string;
  rank?: number;
}
interface Link {
  rank: number;
  host: string;
  class: string;
  becauseRank: number;
  becauseHost: string;
  becauseClass: string;
  text: string;
}
interface DiagnosisJson {
  verdict: {
    class: string;
    cause: string | null;
    summary: string;
    evidence: Evidence[];
    links?: Link[];
    facts?: Record<string, unknown>;
  };
  rootException: { type: string; message: string } | null;
  ranks?: { rank: number; host: string; class: string }[];
}

// Someone's streaming request (rid other-N); resolves when it ends, however it ends.
async function longRequest(url: string, i: number, signal: AbortSignal): Promise<void> {
  const body = {
    text: 'Tell me a long story.',
    rid: `other-${i}`,
    stream: true,
    sampling_params: { max_new_tokens: LONG_OUTPUT_TOKENS, min_new_tokens: LONG_OUTPUT_TOKENS, ignore_eos: true },
  };
  try {
    const res = await fetch(`${url}/generate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal,
    });
    await res.text();
  } catch {
    /* cut by the stop: expected */
  }
}

// Wait until the endpoint answers /health (rank0 up with its worker).
async function waitHealthy(url: string, ms = 90_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    try {
      if ((await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) })).status === 200) return;
    } catch {
      /* not yet */
    }
    await sleep(500);
  }
  throw new Error(`${url} did not become healthy`);
}

// Wait until a host's journal of the unit since `since` matches.
async function waitJournal(h: TestHost, since: string, re: RegExp, ms = 60_000): Promise<string> {
  const end = Date.now() + ms;
  for (;;) {
    const text = sshRun(h, `journalctl -u ${UNIT} --no-pager -o short-precise --since=${since}`);
    if (re.test(text) || Date.now() > end) return text;
    await sleep(1000);
  }
}

// Every evidence line names a host and a rank, and its source reads "rankN host".
function expectNamed(ev: Evidence[], hosts: Record<number, string>): void {
  expect(ev.length).toBeGreaterThan(0);
  for (const e of ev) {
    expect(e.rank, JSON.stringify(e)).toBeTypeOf('number');
    expect(e.host, JSON.stringify(e)).toBe(hosts[e.rank!]);
    expect(e.source ?? '', JSON.stringify(e)).toContain(`rank${e.rank} ${e.host}`);
  }
}

describe('seeds 1 and 2 on a two-host group, diagnosed once for the group', () => {
  let g: TwoRankGroup;
  let rank0: TestHost;
  let rank1: TestHost;
  let endpoint: string;
  let actionLog: string;
  let hosts: Record<number, string>;
  const flags = () => ['-c', g.config, '--ssh-config', rank0.sshConfig];
  const hostEpoch = (h: TestHost) => `@${sshRun(h, 'date +%s').trim()}`;

  // Install both ranks (rank0 with a short TimeoutStopSec) and start them; rank1 reaches rank0 through the relay.
  async function startGroup(): Promise<void> {
    installRankUnit(
      rank0,
      UNIT,
      renderRankUnit(UNIT, PORT, 0, `${rank0.ip}:${DIST_PORT}`).replace(
        'TimeoutStopSec=20',
        `TimeoutStopSec=${RANK0_TIMEOUT_STOP_SEC}`,
      ),
    );
    installRankUnit(rank1, UNIT, renderRankUnit(UNIT, PORT, 1, `${rank1.hostIp}:${DIST_PORT}`));
    sshRun(rank0, `systemctl start ${UNIT}`);
    sshRun(rank1, `systemctl start ${UNIT}`);
    await waitHealthy(endpoint);
  }

  beforeAll(async () => {
    const all = loadTestHosts();
    rank0 = all.find((h) => h.name === 'th1')!;
    rank1 = all.find((h) => h.name === 'th2')!;
    hosts = { 0: rank0.name, 1: rank1.name };
    endpoint = `http://${rank0.ip}:${PORT}`;
    const relay = await startDistRelay(rank1.hostIp, rank0.ip, DIST_PORT);
    g = { rank0, rank1, relay, config: writeTwoHostConfig(rank0, rank1, UNIT, PORT) };
    actionLog = join(mkdtempSync(join(tmpdir(), 'spectune-group-see-')), 'actions.jsonl');
    await startGroup();
  }, 180_000);
  afterAll(() => stopTwoRankGroup(g, UNIT), 120_000);

  it("seed 1: an operator stop of rank 0 mid-drain times out; the group verdict is that stop timeout, rank 1's NCCL abort linked to it", async () => {
    const since = hostEpoch(rank0);
    const ac = new AbortController();
    const load = Promise.all(Array.from({ length: 16 }, (_, i) => longRequest(endpoint, i + 1, ac.signal)));
    await sleep(2500);
    appendFileSync(
      actionLog,
      `${JSON.stringify({ ts: new Date().toISOString(), action: 'stop', unit: UNIT, by: 'operator', host: rank0.name, why: 'operator ran systemctl stop' })}\n`,
    );
    sshRun(rank0, `systemctl stop ${UNIT}; true`);
    ac.abort();
    await load;
    // The real systemd outcome on each host, read directly: rank 0 SIGKILLed mid-drain; rank 1's NCCL watchdog aborts.
    expect(sshRun(rank0, `journalctl -u ${UNIT} --no-pager --since=${since}`)).toMatch(
      /State 'stop-sigterm' timed out\. Killing\./,
    );
    expect(
      await waitJournal(rank1, since, /Watchdog caught collective operation timeout[\s\S]*(?:code=dumped|code=killed)/),
    ).toMatch(/Watchdog caught collective operation timeout/);
    await sleep(3000);

    const started = Date.now();
    const r = await runCli(['diagnose', ...flags(), '--since', since, '--actions', actionLog, '--json'], {});
    const ms = Date.now() - started;
    expect(r.code, r.stderr).toBe(0);
    const d = JSON.parse(r.stdout) as DiagnosisJson;
    console.log(`seed 1 on the group: one diagnose -c in ${ms} ms: ${d.verdict.summary}`);
    expect(d.verdict.class).toBe('stop_timeout');
    expect(d.verdict.facts?.stop_by).toBe('operator');
    expectNamed(d.verdict.evidence, hosts);
    expect(d.verdict.evidence.some((e) => e.rank === 0 && /stop-sigterm' timed out/.test(e.text))).toBe(true);
    expect(d.ranks?.map((x) => [x.rank, x.host])).toEqual([
      [0, rank0.name],
      [1, rank1.name],
    ]);
    expect(d.verdict.links).toHaveLength(1);
    expect(d.verdict.links![0]).toMatchObject({
      rank: 1,
      host: rank1.name,
      class: 'distributed_error',
      becauseRank: 0,
      becauseHost: rank0.name,
      becauseClass: 'stop_timeout',
    });
    expect(d.verdict.summary).toContain(
      `rank 1 (${rank1.name}) aborted (distributed_error) because rank 0 (${rank0.name}) was stopped (stop timeout`,
    );

    // The text report: host and rank on every evidence line, and the link.
    const text = await runCli(['diagnose', ...flags(), '--since', since, '--actions', actionLog], {});
    expect(text.code, text.stderr).toBe(0);
    console.log(text.stdout);
    const evidence = text.stdout
      .slice(text.stdout.indexOf('Evidence:'), text.stdout.indexOf('\n\n', text.stdout.indexOf('Evidence:')))
      .split('\n')
      .slice(1);
    expect(evidence.length).toBeGreaterThan(0);
    for (const l of evidence) expect(l).toMatch(new RegExp(`^  rank(0 ${rank0.name}|1 ${rank1.name})`));
    expect(text.stdout).toMatch(
      /Linked:\n {2}rank 1 \(th2\) aborted \(distributed_error\) because rank 0 \(th1\) was stopped/,
    );

    // --rank 1: the worker's own verdict, its evidence on th2 alone, still linked to rank 0.
    const one = await runCli(['diagnose', ...flags(), '--rank', '1', '--since', since, '--json'], {});
    expect(one.code, one.stderr).toBe(0);
    const w = JSON.parse(one.stdout) as DiagnosisJson;
    expect(w.verdict.class).toBe('distributed_error');
    expect(w.verdict.evidence.every((e) => e.rank === 1 && e.host === rank1.name)).toBe(true);
    expect(w.verdict.evidence.some((e) => /Watchdog caught collective operation timeout/.test(e.text))).toBe(true);
    expect(w.verdict.links?.[0]).toMatchObject({ becauseRank: 0, becauseClass: 'stop_timeout' });
    const bad = await runCli(['diagnose', ...flags(), '--rank', '2', '--since', since], {});
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--rank: expected 0..1');
  }, 240_000);

  it('seed 2: a crash loop on the group (steps=10), its root exception beyond tail -20, diagnosed once with host and rank named', async () => {
    sshRun(rank1, `systemctl stop ${UNIT}; true`);
    await startGroup();
    const since = hostEpoch(rank0);
    const r = await runCli(['apply', ...flags(), '--set', 'speculative_num_steps=10', '--no-rollback', '--json'], {
      SPECTUNE_ACTION_LOG: actionLog,
    });
    expect(r.code, r.stderr.slice(-3000)).toBe(1);
    // What `tail -20` of rank 0's journal shows: not the root exception's traceback head.
    const tail = sshRun(rank0, `journalctl -u ${UNIT} --no-pager --since=${since} | tail -20`);
    const full = sshRun(rank0, `journalctl -u ${UNIT} --no-pager --since=${since}`);
    expect(full).toMatch(/Traceback \(most recent call last\)/);
    expect(tail).not.toMatch(/Traceback \(most recent call last\)/);

    const d = JSON.parse(
      (await runCli(['diagnose', ...flags(), '--since', since, '--actions', actionLog, '--json'], {})).stdout,
    ) as DiagnosisJson;
    console.log(
      `seed 2 on the group: ${d.verdict.summary}\n${d.verdict.evidence.map((e) => `${e.source}:L${e.line} ${e.text.slice(0, 100)}`).join('\n')}\n${JSON.stringify(d.ranks)}`,
    );
    expect(d.verdict.class === 'crash_loop' ? d.verdict.cause : d.verdict.class).toBe('kv_cache_oom');
    expect(d.rootException && `${d.rootException.type}: ${d.rootException.message}`).toMatch(
      /RuntimeError: Not enough memory/,
    );
    expectNamed(d.verdict.evidence, hosts);
    expect(d.verdict.evidence.some((e) => /Not enough memory/.test(e.text))).toBe(true);
    expect(d.ranks?.map((x) => [x.rank, x.host])).toEqual([
      [0, rank0.name],
      [1, rank1.name],
    ]);
    // A worker that aborted because rank 0 died is linked to it; one that failed of its own is not.
    for (const l of d.verdict.links ?? [])
      expect(l).toMatchObject({ rank: 1, becauseRank: 0, becauseHost: rank0.name });
    const one = JSON.parse(
      (await runCli(['diagnose', ...flags(), '--rank', '1', '--since', since, '--json'], {})).stdout,
    ) as DiagnosisJson;
    expect(one.verdict.evidence.every((e) => e.rank === 1 && e.host === rank1.name)).toBe(true);
    expect(one.verdict.summary).toMatch(new RegExp(`^rank 1 \\(${rank1.name}\\)`));
  }, 300_000);
});
