// `spectune status`: unit state, engine settings in force, health — of one unit, or of every rank of a group.
import type { EventSink } from '../tune/events.js';
import type { ServiceStatus } from '../service/index.js';
import { isToolError } from '../errors.js';
import { existsSync } from 'node:fs';
import type { Host } from '../host/types.js';
import { describeHolder, lockPath, parseLockRecord } from '../lock/index.js';
import { listCampaigns, listTrials, openStore } from '../store/index.js';
import { describeRankDifferences } from '../service/index.js';
import { readCoverage } from './group-guard.js';
import { openService, type OpenService, type ServiceTarget } from './service-target.js';

/** One rank's status (a worker's health is not asked: it serves no HTTP). */
export type RankStatus = ServiceStatus & { rank: number };

/** The status of a group (or of the one rank --rank picked). */
export interface GroupStatus {
  endpoint: string;
  /** rank0 answers its health check (when it is among the ranks) and every other rank is active. */
  healthy: boolean;
  ranks: RankStatus[];
  /** What differs between the ranks (drop-in version, settings in force), one line each; empty when they agree. */
  differences: string[];
  /** Set when the units' launch lines name more nodes than the target lists (a change would split the group). */
  incomplete: string | null;
}

// Whether a target is one unit read as before (rank0 alone, or a unit named by --host/--unit).
export function isSingleUnit(target: ServiceTarget): boolean {
  return target.ranks.length === 1 && target.ranks[0].rank === 0;
}

// Read the status of the target service (one unit).
export async function readServiceStatus(
  target: ServiceTarget,
  onEvent: EventSink,
): Promise<
  ServiceStatus & {
    endpoint: string;
    lock: LockHolder | null;
    incomplete: string | null;
    campaigns?: RunningCampaign[];
  }
> {
  const svc = await openService(target, onEvent);
  try {
    const [st, lock, incomplete] = await Promise.all([
      svc.controller.status(),
      readLockHolder(svc.host, svc.controller.unit),
      describeIncomplete(svc, target),
    ]);
    const campaigns = target.store ? readRunningCampaigns(target.store, lock) : undefined;
    return { ...st, endpoint: svc.endpoint, lock, incomplete, ...(campaigns ? { campaigns } : {}) };
  } finally {
    await svc.close();
  }
}

// Read the status of every rank of the target, rank0 first.
export async function readGroupStatus(target: ServiceTarget, onEvent: EventSink): Promise<GroupStatus> {
  const svc = await openService(target, onEvent);
  try {
    const ranks = await Promise.all(
      svc.group.ranks.map(async (c, i) => {
        const rank = target.ranks[i].rank;
        return { ...(await c.status({ health: rank === 0 })), rank };
      }),
    );
    const healthy = ranks.every((r) => (r.rank === 0 ? r.health.ok : r.state.activeState === 'active'));
    const differences = describeRankDifferences(
      ranks.map((r) => ({ rank: r.rank, version: r.versions.current, settings: r.settings })),
    );
    return { endpoint: svc.endpoint, healthy, ranks, differences, incomplete: await describeIncomplete(svc, target) };
  } finally {
    await svc.close();
  }
}

/** A campaign the store calls running: live while a tune holds the unit's lock, else interrupted (a killed run). */
export interface RunningCampaign {
  id: number;
  name: string;
  store: string;
  startedAt: string;
  trials: number;
  text: string;
}

// The campaigns of spectune.yaml's store that are still "running" (read-only: a store that does not exist is not created).
export function readRunningCampaigns(store: string, lock: LockHolder | null): RunningCampaign[] {
  if (!existsSync(store)) return [];
  const db = openStore(store);
  try {
    return listCampaigns(db)
      .filter((c) => c.status === 'running')
      .map((c) => {
        const trials = listTrials(db, c.id).length;
        const live = lock?.command === 'tune';
        const text =
          `#${c.id} ${c.name} running since ${c.createdAt}, ${trials} trial${trials === 1 ? '' : 's'} so far (${store})` +
          (live
            ? `, by ${lock.text}`
            : ": no tune holds the unit's lock, so its run ended without finishing it; `spectune tune --resume` goes on");
        return { id: c.id, name: c.name, store, startedAt: c.createdAt, trials, text };
      });
  } finally {
    db.close();
  }
}

// A warning when the ranks' launch lines name more nodes than the target lists (status is read-only: it says so).
async function describeIncomplete(svc: OpenService, target: ServiceTarget): Promise<string | null> {
  if (target.rankPicked) return null;
  const c = await readCoverage(
    svc.group.ranks.map((c, i) => ({ host: c.host, unit: c.unit, rank: target.ranks[i].rank })),
    target.engine,
    'status',
  );
  if (c.status === 'whole') return null;
  return `the target lists only ${c.listed} of a ${c.count}-node group (rank ${c.others.join(', ')} missing): apply, rollback, fold and tune refuse to change it alone; list every rank under target.hosts (spectune init --host per rank)`;
}

/** Who holds the unit's host lock (null: nobody). */
export interface LockHolder {
  user: string;
  machine: string;
  pid: number;
  command: string;
  startedAt: string;
  text: string;
}

// Read the unit's host lock record, read-only (null when there is none or it is not spectune's record).
export async function readLockHolder(host: Host, unit: string): Promise<LockHolder | null> {
  let text: string;
  try {
    text = await host.readFile(lockPath(unit));
  } catch (e) {
    if (isToolError(e) && e.code === 'E_FILE_NOT_FOUND') return null;
    throw e;
  }
  const r = parseLockRecord(text);
  if (!r) return null;
  return { ...r.owner, command: r.command, startedAt: new Date(r.startedAt).toISOString(), text: describeHolder(r) };
}
