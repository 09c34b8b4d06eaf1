// The guard of every host-changing command (apply, rollback, fold, tune) against splitting a multi-node group: read
// each unit's launch line; a target that changes fewer ranks than its --nnodes is refused, unless --rank N asked for
// exactly that, and then it says plainly that the ranks will differ. Reads the hosts only.
import { ToolError } from '../errors.js';
import type { EngineName } from '../engines/types.js';
import type { Host } from '../host/types.js';
import { describeUnitFiles } from '../onboard/discover.js';
import { judgeCoverage, type GroupCoverage } from '../onboard/group.js';
import { catUnit } from '../service/systemd.js';
import type { EventSink } from '../tune/events.js';

/** The units a command changes, with their rank in the group. */
export interface GuardedRank {
  host: Host;
  unit: string;
  rank: number;
}

// The most nodes any of the units' launch lines names (1: none is multi-node; a unit that cannot be read counts 1).
async function groupSize(ranks: GuardedRank[], engine: EngineName): Promise<number> {
  const sizes = await Promise.all(
    ranks.map(async (r) => {
      const files = await catUnit(r.host, r.unit).catch(() => null);
      return (files && describeUnitFiles(r.unit, files, engine)?.nodes?.count) || 1;
    }),
  );
  return Math.max(1, ...sizes);
}

// How the units cover their group (read from each unit's launch line).
export async function readCoverage(ranks: GuardedRank[], engine: EngineName, command: string): Promise<GroupCoverage> {
  return judgeCoverage(
    await groupSize(ranks, engine),
    ranks.map((r) => ({ rank: r.rank, name: `${r.host.name} ${r.unit}` })),
    command,
  );
}

// Refuse a change to part of a multi-node group (E_USAGE, one line with the fix), or, when --rank N picked it on
// purpose (`rankPicked`), warn that the ranks will differ. `rankFlag`: whether the command has --rank.
export async function guardGroupChange(
  ranks: GuardedRank[],
  engine: EngineName,
  command: string,
  o: { rankPicked: boolean; rankFlag: boolean; onEvent: EventSink },
): Promise<void> {
  const c = await readCoverage(ranks, engine, command);
  if (c.status === 'whole') return;
  if (o.rankPicked) {
    o.onEvent({
      type: 'log',
      ts: Date.now(),
      level: 'warn',
      message: `--rank ${c.changed.join(',')}: ${command} changes only ${c.listed} of a ${c.count}-node group: the ranks will differ (rank ${c.others.join(', ')} keep${c.others.length === 1 ? 's' : ''} the old config) until the same change reaches every rank`,
    });
    return;
  }
  const list = 'list every rank under target.hosts (`spectune init --host HOST0 --host HOST1` writes them)';
  throw new ToolError('E_USAGE', `${c.message}: refused, nothing was changed`, {
    hint: o.rankFlag ? `${list}, or pass --rank ${c.changed[0]} to change this rank alone on purpose` : list,
  });
}
