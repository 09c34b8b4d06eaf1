// Live diagnose of a group of ranks (one model over several hosts): every rank's journal, state and kernel log read
// over its own host, streamed at once through that rank's own diagnoser and the group's, then joined: evidence
// named with host and rank, workers' aborts linked to the rank that ended first; --rank N answers for one rank.
import {
  createDiagnoser,
  joinRanks,
  rankSource,
  type ActionRecord,
  type Diagnosis,
  type RankDiagnosis,
} from '../diagnose/index.js';
import type { EngineName } from '../engines/types.js';
import { ToolError } from '../errors.js';
import type { Host } from '../host/index.js';
import { collectLiveContext, streamStdout, type LiveContext } from './diagnose-live.js';

/** One rank to read: its open host, unit and rank number. */
export interface LiveRank {
  host: Host;
  unit: string;
  rank: number;
}

/** What to diagnose over a group. */
export interface GroupLiveRequest {
  since: string;
  engine?: EngineName;
  actions?: ActionRecord[];
  /** Answer for this rank (its own verdict, linked to the others'); default the group. */
  pick?: number;
  idleMs?: number;
}

// Diagnose every rank live and join the verdicts (ranks read one after another: the group diagnosis takes the first
// source read as rank0, the one its state belongs to).
export async function diagnoseRanks(ranks: LiveRank[], req: GroupLiveRequest): Promise<Diagnosis> {
  const contexts: LiveContext[] = [];
  for (const r of ranks) contexts.push(await collectLiveContext(r.host, r.unit, req.since));
  const kernel = contexts
    .map((c) => c.kernelLines)
    .filter(Boolean)
    .join('\n');
  const group = createDiagnoser({
    engine: req.engine,
    actions: req.actions,
    unit: ranks[0].unit,
    state: contexts[0].state,
    kernelLines: kernel || undefined,
  });
  const own = ranks.map((r, i) =>
    createDiagnoser({
      engine: req.engine,
      actions: req.actions,
      unit: r.unit,
      state: contexts[i].state,
      kernelLines: contexts[i].kernelLines || undefined,
    }),
  );
  const read: boolean[] = [];
  for (const [i, r] of ranks.entries()) {
    const source = rankSource(r.rank, r.host.name);
    let text = false;
    const argv = ['journalctl', '-u', r.unit, '-o', 'json', '--since', req.since, '--no-pager'];
    await streamStdout(
      r.host,
      argv,
      `journalctl -u ${r.unit}`,
      (c) => {
        text ||= c.some((b) => b > 32);
        group.push(source, c);
        own[i].push(source, c);
      },
      req.idleMs,
    );
    read.push(text);
  }
  if (!read.some(Boolean))
    throw new ToolError(
      'E_INPUT_UNUSABLE',
      `no journal entries for ${ranks.map((r) => `${r.host.name} ${r.unit}`).join(', ')} since "${req.since}"`,
      { hint: 'widen --since' },
    );
  const per: RankDiagnosis[] = ranks.flatMap((r, i) =>
    read[i]
      ? [
          {
            rank: r.rank,
            host: r.host.name,
            unit: r.unit,
            source: rankSource(r.rank, r.host.name),
            diagnosis: own[i].finish(),
          },
        ]
      : [],
  );
  if (req.pick !== undefined && !per.some((p) => p.rank === req.pick)) {
    const r = ranks.find((x) => x.rank === req.pick)!;
    throw new ToolError(
      'E_INPUT_UNUSABLE',
      `${r.host.name}: no journal entries for ${r.unit} since "${req.since}" (rank ${req.pick})`,
      { hint: 'widen --since, or leave out --rank for the group' },
    );
  }
  return joinRanks(group.finish(), per, req.pick);
}
