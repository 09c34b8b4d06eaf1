// Pure reading of a multi-node launch line (which group a unit belongs to and which rank it is) and the judgement of
// whether the ranks init found, or spectune.yaml lists, make the whole group. Text in, data out.
import { resolveReferences } from '../engines/command-line.js';
import { flagValue, intOf } from '../engines/flag-value.js';
import { getEngine } from '../engines/registry.js';
import type { EngineName } from '../engines/types.js';

/** The most ranks spectune.yaml's target holds (target.hosts: rank0, rank1). */
export const MAX_GROUP_RANKS = 2;

/**
 * How a launch line spans nodes. `ranks`: every node runs the same engine command with its own rank (SGLang
 * `--nnodes/--node-rank/--dist-init-addr`, vLLM `--nnodes/--node-rank/--master-addr`): each is a rank of one group.
 * `head`: only this unit runs the engine, its peers run no engine command (vLLM over a Ray cluster: `ray start`
 * workers; llama.cpp `--rpc`: `rpc-server` workers): the group has one tunable unit.
 */
export type NodeGroup =
  | { form: 'ranks'; count: number; rank: number; initAddr: string | null; flags: string }
  | { form: 'head'; peers: string[]; note: string };

// Which multi-node form a launch line uses (null: one node). argv: the engine argv as written; env: the unit's
// Environment= (a `--node-rank ${RANK}` reads through it).
export function readNodeGroup(
  engine: EngineName,
  argvAsWritten: readonly string[],
  env: Record<string, string> = {},
): NodeGroup | null {
  const argv = argvAsWritten.map((a) => resolveReferences(a, env));
  const adapter = getEngine(engine);
  const ranks = adapter.multiNode?.rankFlags;
  const count = ranks ? intOf(flagValue(argv, ['--nnodes'])) : null;
  if (ranks && count !== null && count > 1) {
    const rank = intOf(flagValue(argv, ['--node-rank'])) ?? 0;
    const addrFlag = ranks.addrFlags[0];
    const addr = flagValue(argv, ranks.addrFlags);
    const port = ranks.portFlag ? flagValue(argv, [ranks.portFlag]) : undefined;
    const initAddr = addr === undefined ? null : port && !addr.includes(':') ? `${addr}:${port}` : addr;
    return {
      form: 'ranks',
      count,
      rank,
      initAddr,
      flags: `--nnodes ${count} --node-rank ${rank}${initAddr ? ` ${addrFlag} ${addr}` : ''}`,
    };
  }
  const head = adapter.multiNode?.readHeadNode?.(argv);
  return head ? { form: 'head', ...head } : null;
}

/** The host part of a dist-init/master address ("10.0.0.5:20000" → "10.0.0.5", "[fd00::1]:20000" → "fd00::1"). */
export function initAddrHost(addr: string): string {
  const v6 = /^\[([^\]]+)\]/.exec(addr);
  if (v6) return v6[1];
  const i = addr.lastIndexOf(':');
  return i > 0 && addr.indexOf(':') === i ? addr.slice(0, i) : addr;
}

/** One rank found by init: the ssh destination (null: this machine), its unit and what its launch line says. */
export interface FoundRank {
  host: string | null;
  unit: string;
  group: Extract<NodeGroup, { form: 'ranks' }>;
}

/** The group as init assembles it: every rank in rank order, or what is missing and the one line that says so. */
export type GroupAssembly =
  | { status: 'complete'; ranks: FoundRank[] }
  | { status: 'incomplete'; ranks: FoundRank[]; missing: number[]; message: string; hint: string };

// Put the ranks found on the hosts in rank order and say what is missing: same node count, distinct ranks, one
// rank each (a host whose unit is another group's is not counted). `first` is the unit init was asked about.
export function assembleGroup(first: FoundRank, others: FoundRank[]): GroupAssembly {
  const count = first.group.count;
  const byRank = new Map<number, FoundRank>([[first.group.rank, first]]);
  for (const r of others) if (r.group.count === count && !byRank.has(r.group.rank)) byRank.set(r.group.rank, r);
  const ranks = [...byRank.values()].sort((a, b) => a.group.rank - b.group.rank);
  const missing = Array.from({ length: count }, (_, i) => i).filter((i) => !byRank.has(i));
  const where = `${first.host ?? 'this machine'} ${first.unit} is rank ${first.group.rank} of ${count} nodes (${first.group.flags})`;
  if (count > MAX_GROUP_RANKS) {
    return {
      status: 'incomplete',
      ranks,
      missing,
      message: `${where}: spectune.yaml's target holds ${MAX_GROUP_RANKS} ranks at most (rank0, rank1), this group has ${count}`,
      hint: 'tune a model split over two nodes, or drive the group yourself',
    };
  }
  if (!missing.length) return { status: 'complete', ranks };
  const hosts = ranks.map((r) => `--host ${r.host ?? 'HOST'}`).join(' ');
  return {
    status: 'incomplete',
    ranks,
    missing,
    message: `${where}: rank ${missing.join(', ')} not found on the hosts given${first.group.initAddr ? ` or at the init address ${initAddrHost(first.group.initAddr)}` : ''}`,
    hint: `pass --host once per rank, e.g. spectune init ${hosts} ${missing.map((m) => `--host HOST_OF_RANK${m}`).join(' ')}`,
  };
}

/** What doctor knows of one listed rank: its role in spectune.yaml and what its launch line says (null: one node). */
export interface ListedRank {
  subject: string;
  role: number;
  nodes: { count: number; rank: number; flags?: string } | null;
}

/** A doctor judgement of the group. */
export interface GroupJudgement {
  status: 'PASS' | 'FAIL';
  summary: string;
  fix: string | null;
}

// Judge whether spectune.yaml lists the whole group: a unit of an N-node group with fewer than N ranks listed (or a
// rank whose --node-rank is not its role) FAILs: a change would restart that rank alone and split the ranks.
// null: no listed unit is multi-node.
export function judgeGroup(listed: ListedRank[]): GroupJudgement | null {
  const multi = listed.filter((l) => l.nodes !== null && l.nodes.count > 1);
  if (!multi.length) return null;
  const count = Math.max(...multi.map((l) => l.nodes!.count));
  const flags = (l: ListedRank) => l.nodes!.flags ?? `--nnodes ${l.nodes!.count} --node-rank ${l.nodes!.rank}`;
  const fix =
    'list every rank under target.hosts (role rank0, rank1): `spectune init --host HOST0 --host HOST1` writes them';
  if (listed.length < count) {
    const l = multi[0];
    return {
      status: 'FAIL',
      summary: `${l.subject} is rank ${l.nodes!.rank} of a ${count}-node group (${flags(l)}) but spectune.yaml lists ${listed.length} of its ${count} ranks: a change would restart this rank alone and leave the ranks on different configs`,
      fix,
    };
  }
  const wrong = multi.filter((l) => l.nodes!.rank !== l.role);
  if (wrong.length) {
    return {
      status: 'FAIL',
      summary: wrong
        .map((l) => `${l.subject} is listed as rank${l.role} but runs --node-rank ${l.nodes!.rank}`)
        .join('; '),
      fix: 'give each host the role its --node-rank says (rank0 serves the endpoint)',
    };
  }
  return {
    status: 'PASS',
    summary: `spectune.yaml lists all ${count} ranks of the group (${multi.map((l) => `rank${l.nodes!.rank} ${l.subject}`).join(', ')})`,
    fix: null,
  };
}

/** How a command's target covers a multi-node group; `listed`: "rank 0 (th1 sglang.service)", `others`: the ranks left out. */
export type GroupCoverage =
  | { status: 'whole' }
  | { status: 'partial'; count: number; changed: number[]; others: number[]; listed: string; message: string };

// Whether a host-changing command changes every rank of the group its units belong to. `count`: the most nodes any
// of the units' launch lines names; `ranks`: the ranks the command changes.
export function judgeCoverage(count: number, ranks: { rank: number; name: string }[], command: string): GroupCoverage {
  if (count <= 1 || ranks.length >= count) return { status: 'whole' };
  const changed = ranks.map((r) => r.rank);
  const others = Array.from({ length: count }, (_, i) => i).filter((i) => !changed.includes(i));
  const listed = ranks.map((r) => `rank ${r.rank} (${r.name})`).join(', ');
  return {
    status: 'partial',
    count,
    changed,
    others,
    listed,
    message: `${command} would change only ${listed} of a ${count}-node group: rank ${others.join(', ')} keep${others.length === 1 ? 's' : ''} ${others.length === 1 ? 'its' : 'their'} config, so the ranks will differ`,
  };
}
