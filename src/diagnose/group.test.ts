import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diagnoseLogs } from './diagnoser.js';
import { joinRanks, linkRanks, rankSource, type RankDiagnosis } from './group.js';

const FIX = join(import.meta.dirname, '../../test/fixtures/journal/sglang/seed1-stop-timeout');
const UNIT = 'sglang-qwen.service';
/** Rank 0 (llm-two): the seed-1 stop timeout, killed at 22:28:49. */
const RANK0 = readFileSync(join(FIX, 'journal.txt'), 'utf8');
const RANK0_STATE = readFileSync(join(FIX, 'state.txt'), 'utf8');

// Rank 1 (llm-one): up with rank 0, then its NCCL watchdog aborts 12 s after rank 0 died; systemd restarts it once.
const P = 'Mar 09 22:29:01 llm-one sglang-qwen[2210]:';
const RANK1 = [
  'Mar 09 22:18:40 llm-one systemd[1]: Started SGLang Qwen3.5-122B-A10B (rank 1).',
  "Mar 09 22:18:44 llm-one sglang-qwen[2210]: [2026-03-09 22:18:44] server_args=ServerArgs(model_path='/models/Qwen3.5-122B-A10B', tp_size=4, nnodes=2, node_rank=1, port=30000)",
  'Mar 09 22:18:47 llm-one sglang-qwen[2210]: [2026-03-09 22:18:47 TP2] Init torch distributed begin.',
  `${P} [rank1]:[E0309 22:29:01.000000 ProcessGroupNCCL.cpp:629] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=12345, OpType=ALLREDUCE, NumelIn=2048, NumelOut=2048, Timeout(ms)=600000) ran for 600081 milliseconds before timing out.`,
  `${P} [rank1]:[E0309 22:29:01.000000 ProcessGroupNCCL.cpp:629] [Rank 1] To avoid data inconsistency, we are taking the entire process down.`,
  `${P} terminate called after throwing an instance of 'c10::DistBackendError'`,
  'Mar 09 22:29:01 llm-one systemd[1]: sglang-qwen.service: Main process exited, code=dumped, status=6/ABRT',
  "Mar 09 22:29:01 llm-one systemd[1]: sglang-qwen.service: Failed with result 'core-dump'.",
  'Mar 09 22:29:02 llm-one systemd[1]: sglang-qwen.service: Scheduled restart job, restart counter is at 3.',
  'Mar 09 22:29:02 llm-one systemd[1]: Started SGLang Qwen3.5-122B-A10B (rank 1).',
  'Mar 09 22:29:06 llm-one sglang-qwen[2301]: [2026-03-09 22:29:06 TP2] Init torch distributed begin.',
  '',
].join('\n');
/** Rank 1's unit as systemd shows it: NRestarts counts restarts from before the window too. */
const RANK1_STATE =
  'Type=simple\nRestart=always\nNRestarts=3\nResult=success\nActiveState=activating\nSubState=start\nMainPID=2301\n';

// Each rank diagnosed alone (its own state), as live diagnose does.
function ranks(): RankDiagnosis[] {
  return [
    {
      rank: 0,
      host: 'llm-two',
      unit: UNIT,
      source: rankSource(0, 'llm-two'),
      diagnosis: diagnoseLogs([{ name: rankSource(0, 'llm-two'), content: RANK0 }], {
        state: RANK0_STATE,
        unit: UNIT,
        engine: 'sglang',
      }),
    },
    {
      rank: 1,
      host: 'llm-one',
      unit: UNIT,
      source: rankSource(1, 'llm-one'),
      diagnosis: diagnoseLogs([{ name: rankSource(1, 'llm-one'), content: RANK1 }], {
        state: RANK1_STATE,
        unit: UNIT,
        engine: 'sglang',
      }),
    },
  ];
}

// The group diagnosis: both journals at once, rank0's first, with rank0's state (as on the test hosts, where rank0's
// unit had restarted twice before: NRestarts=2).
function group(state = RANK0_STATE.replace('NRestarts=0', 'NRestarts=2')) {
  return diagnoseLogs(
    [
      { name: rankSource(0, 'llm-two'), content: RANK0 },
      { name: rankSource(1, 'llm-one'), content: RANK1 },
    ],
    { state, unit: UNIT, engine: 'sglang' },
  );
}

describe('group diagnosis', () => {
  it("links the worker's NCCL abort to rank 0's stop timeout 13 s before it (its end: the restart line)", () => {
    const links = linkRanks(ranks());
    expect(links).toEqual([
      {
        rank: 1,
        host: 'llm-one',
        class: 'distributed_error',
        becauseRank: 0,
        becauseHost: 'llm-two',
        becauseClass: 'stop_timeout',
        afterSec: 13,
        text: 'rank 1 (llm-one) aborted (distributed_error) because rank 0 (llm-two) was stopped (stop timeout: SIGKILL after TimeoutStopSec) 13 s before',
      },
    ]);
  });

  it("the group verdict is rank 0's stop timeout, every evidence line names host and rank, the link is in the summary", () => {
    // Both journals through one diagnoser read rank 1's single abort with rank 0's NRestarts as a crash loop.
    expect([group().verdict.class, group().verdict.cause]).toEqual(['crash_loop', 'distributed_error']);
    const d = joinRanks(group(), ranks());
    expect(d.verdict.class).toBe('stop_timeout');
    expect(d.verdict.evidence.length).toBeGreaterThan(0);
    for (const e of d.verdict.evidence)
      expect([e.host, e.rank, e.source?.startsWith(`rank${e.rank} ${e.host}`)]).toEqual([
        expect.any(String),
        expect.any(Number),
        true,
      ]);
    expect(
      d.verdict.evidence.some((e) => e.host === 'llm-two' && e.rank === 0 && /stop-sigterm' timed out/.test(e.text)),
    ).toBe(true);
    expect(d.verdict.summary).toMatch(
      /^group of 2 ranks \(rank 0 llm-two, rank 1 llm-one\), rank 0 \(llm-two\) ended first: /,
    );
    expect(
      d.verdict.evidence.some(
        (e) => e.host === 'llm-one' && e.rank === 1 && /Watchdog caught collective operation timeout/.test(e.text),
      ),
    ).toBe(true);
    expect(d.verdict.summary).toContain(
      'Linked: rank 1 (llm-one) aborted (distributed_error) because rank 0 (llm-two) was stopped',
    );
    expect(d.ranks?.map((r) => [r.rank, r.host, r.class, r.cause])).toEqual([
      [0, 'llm-two', 'stop_timeout', null],
      [1, 'llm-one', 'distributed_error', null],
    ]);
  });

  it('--rank 1: one linked abort, not a crash loop of its own (NRestarts=3 counts restarts outside the window)', () => {
    const alone = ranks()[1].diagnosis.verdict;
    expect([alone.class, alone.cause]).toEqual(['crash_loop', 'distributed_error']); // what rank 1 read alone said
    const d = joinRanks(group(), ranks(), 1);
    expect(d.verdict.class).toBe('distributed_error');
    expect(d.verdict.cause).toBeNull();
    expect(d.verdict.summary).toMatch(
      /^rank 1 \(llm-one\), read with rank 0 llm-two, rank 1 llm-one: one distributed_error in the window, not a crash loop: rank 1 \(llm-one\) aborted/,
    );
    expect(d.verdict.links?.[0]).toMatchObject({ becauseRank: 0, becauseClass: 'stop_timeout' });
    expect(d.verdict.evidence.every((e) => e.host === 'llm-one' && e.rank === 1)).toBe(true);
    expect(d.verdict.evidence.some((e) => /Watchdog caught collective operation timeout/.test(e.text))).toBe(true);
  });

  it('a group verdict that names its own failure stays, with the link added', () => {
    const d = joinRanks(group(RANK0_STATE), ranks());
    expect(d.verdict.class).toBe('stop_timeout');
    expect(d.verdict.summary).toMatch(
      /^group of 2 ranks \(rank 0 llm-two, rank 1 llm-one\): Stop timeout.* Linked: rank 1 \(llm-one\) aborted/,
    );
    for (const e of d.verdict.evidence)
      expect(e.host === 'llm-two' ? e.rank : e.host === 'llm-one' ? e.rank : null).not.toBeNull();
  });

  it('no link when the worker died first or of its own cause', () => {
    const [r0, r1] = ranks();
    expect(linkRanks([r0])).toEqual([]);
    expect(
      linkRanks([
        { ...r0, rank: 1 },
        { ...r1, rank: 0, diagnosis: r0.diagnosis },
      ]),
    ).toEqual([]);
  });
});

describe('linking only what explains the rank being down now', () => {
  it("an older abort followed by a death of the rank's own is not linked to the peer", () => {
    // Rank 1 as above, then its restarted process (2301) dies of its own kv_cache_oom: it is down for that, not for rank 0.
    const Q = 'Mar 09 22:31:00 llm-one sglang-qwen[2301]:';
    const own =
      RANK1 +
      [
        `${Q} [2026-03-09 22:31:00 TP2] RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.`,
        'Mar 09 22:31:00 llm-one systemd[1]: sglang-qwen.service: Main process exited, code=exited, status=1/FAILURE',
        "Mar 09 22:31:00 llm-one systemd[1]: sglang-qwen.service: Failed with result 'exit-code'.",
        '',
      ].join('\n');
    const r = ranks();
    r[1] = {
      ...r[1],
      diagnosis: diagnoseLogs([{ name: rankSource(1, 'llm-one'), content: own }], {
        state: RANK1_STATE,
        unit: UNIT,
        engine: 'sglang',
      }),
    };
    expect(linkRanks(ranks()).map((l) => l.rank)).toEqual([1]);
    expect(linkRanks(r)).toEqual([]);
  });
});
