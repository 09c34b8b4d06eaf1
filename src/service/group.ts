// A service group: the units of one model (one or more ranks; rank0 serves HTTP and hosts the dist-init store, the
// others join it) controlled as one: every deploy goes to every rank, ranks restart in rank order, all are watched
// at once, a failure is diagnosed from every rank's journal in one verdict, and every rank is rolled back.
import { namesNoFailure } from '../diagnose/index.js';
import type { Verdict } from '../diagnose/index.js';
import { ToolError } from '../errors.js';
import { ignoreEvents } from '../events.js';
import type { ServiceEventSink } from './events.js';
import type { ActionLog } from './action-log.js';
import { diagnoseCollaborators, type Collaborators } from './collaborators.js';
import type { ServiceController } from './controller.js';
import {
  RollbackFailedError,
  type FailedStart,
  type RankLook,
  type ReadyResult,
  type RollbackPlan,
  type StopOptions,
} from './controller-types.js';
import type { Version } from './deploy.js';
import { armLease, renewLease, type LeaseOptions } from './lease.js';
import { backoffMs, isLostHost, LEASE_MARGIN_MS, lostHostError } from './lost-host.js';
import type { Changes, DeployPlan } from './plan.js';
import { isStartingOrUp } from './show.js';
import { lastJournalCursor, measureClockOffsetMs, readJournalAfter, readKernelLog, showUnit } from './systemd.js';

/** After the first rank fails, how long the others get to log their own end (the echo the diagnosis attributes). */
const ECHO_WINDOW_MS = 3000;
/** After a rollback, how long a worker still starting (activating) gets to become active once rank0 is ready. */
const WORKER_SETTLE_MS = 30_000;
const WORKER_POLL_MS = 250;
/** A reachability probe (`true` over ssh) that takes longer than this counts the rank as unreachable. */
const PROBE_TIMEOUT_MS = 5000;
/** Without a lease, how long a group change waits for a lost rank to answer again. */
const NO_LEASE_WAIT_MS = 60_000;
/** The group renews every rank's lease this many times per lease length. */
const RENEWALS_PER_LEASE = 5;

/** What a group is built from; ranks[0] is rank0 (the endpoint), the rest are workers. */
export interface ServiceGroupOptions {
  ranks: ServiceController[];
  onEvent?: ServiceEventSink;
  /** The action log the controllers write (attributes the stops in the diagnosis). */
  actionLog?: ActionLog;
  collaborators?: Collaborators;
  echoWindowMs?: number;
  /** The commit-confirmed lease over the whole group: armed on every rank before the first one changes. */
  lease?: LeaseOptions;
  /** Waits between retries (tests may shorten them). */
  sleep?: (ms: number) => Promise<void>;
}

/** The outcome of a group start: ready, or the first rank that failed (the others stopped) with the group verdict. */
export type GroupReady =
  | { status: 'ready' }
  | { status: 'failed'; rank: number; failed: FailedStart; verdict: Verdict };

/** Where each rank's journal stood before a group start: everything after it belongs to that start. */
interface StartMark {
  cursor: string | null;
  startedAt: number;
  clockOffsetMs: number;
}

/** How one rank's wait ended: its result, an error, or aborted (the group no longer needed it). */
type RankEnd<T> = { rank: number; r: T } | { rank: number; error: unknown } | { rank: number; aborted: true };

// A rank as the group names it: "host unit".
export function nameOfRank(ctl: ServiceController): string {
  return `${ctl.host.name} ${ctl.unit}`;
}

// The group verdict: the diagnosis over every rank's journal, kept a crash loop when the failed rank looped.
export function mergeGroupVerdict(group: Verdict | null, failed: FailedStart, failedName: string): Verdict {
  // A group diagnosis that names no failure says less than the failed rank's own verdict.
  if (!group || namesNoFailure(group)) return failed.verdict;
  const summary = `${failedName} failed first; over all ranks' journals: ${group.summary}`;
  if (failed.verdict.class !== 'crash_loop' || group.class === 'crash_loop') return { ...group, summary };
  return {
    ...group,
    class: 'crash_loop',
    cause: group.class,
    summary: `crash loop on ${failedName}: each start dies of ${group.class}. ${summary}`,
  };
}

// The group's version number from each rank's next free one (0: the rank does not change): the largest, so that no
// rank reuses a number it already kept; undefined when no rank changes.
export function pickGroupVersion(next: number[]): number | undefined {
  const m = Math.max(0, ...next);
  return m > 0 ? m : undefined;
}

/** Settings that are each rank's own (where it listens), not the group's config. */
const PER_RANK_KEYS = new Set(['host', 'port']);

// What differs between the ranks of a group (their drop-in version, and each engine setting in force outside the
// per-rank ones), one line each; empty when they run the same config.
export function describeRankDifferences(
  ranks: { rank: number; version: Version | null; settings: Record<string, unknown> }[],
): string[] {
  if (ranks.length < 2) return [];
  const out: string[] = [];
  const each = (f: (r: (typeof ranks)[number]) => unknown) =>
    ranks.map((r) => `rank${r.rank} ${f(r) === undefined ? '(not set)' : String(f(r))}`).join(', ');
  if (new Set(ranks.map((r) => String(r.version))).size > 1)
    out.push(`drop-in version differs: ${each((r) => r.version ?? 'none recorded')}`);
  const keys = [...new Set(ranks.flatMap((r) => Object.keys(r.settings)))].filter((k) => !PER_RANK_KEYS.has(k)).sort();
  for (const k of keys) {
    if (new Set(ranks.map((r) => JSON.stringify(r.settings[k]))).size > 1)
      out.push(`${k} differs: ${each((r) => r.settings[k])}`);
  }
  return out;
}

// Drop the controllers' own per-rank diagnosis events: the group emits the one verdict that counts.
export function withoutRankDiagnoses(onEvent: ServiceEventSink): ServiceEventSink {
  return (e) => {
    if (e.type !== 'diagnosis') onEvent(e);
  };
}

// Run one rank's wait; an abort by the group ends it quietly, an error is kept.
async function endOf<T>(rank: number, run: () => Promise<T>, signal: AbortSignal): Promise<RankEnd<T>> {
  try {
    return { rank, r: await run() };
  } catch (error) {
    return signal.aborted ? { rank, aborted: true } : { rank, error };
  }
}

// The first rank end that decides the group (others are skipped), or null when every wait ended undecided.
async function firstDecisive<T>(
  waits: Promise<RankEnd<T>>[],
  decides: (e: RankEnd<T>) => boolean,
): Promise<RankEnd<T> | null> {
  const left = new Map(waits.map((w, i) => [i, w.then((e) => ({ i, e }))]));
  while (left.size) {
    const { i, e } = await Promise.race(left.values());
    left.delete(i);
    if (decides(e)) return e;
  }
  return null;
}

// A signal that aborts with the caller's, or when the group aborts.
function linkedAbort(signal?: AbortSignal): AbortController {
  const ac = new AbortController();
  if (signal?.aborted) ac.abort(signal.reason);
  signal?.addEventListener('abort', () => ac.abort(signal.reason), { once: true });
  return ac;
}

// Resolve after ms (never rejects).
function pause(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref?.());
}

/** Controls the units of one model as one service (build it with createServiceGroup). */
export class ServiceGroup {
  readonly ranks: ServiceController[];
  private readonly o: ServiceGroupOptions;
  private readonly onEvent: ServiceEventSink;
  /** When each rank's lease was last armed or renewed (ms; 0: never): how long a retry on it may go on. */
  private readonly renewedAt: number[];
  /** When a rank last failed to answer (a renewal or a probe), ms; 0: never. */
  private lostAt = 0;
  private renewTimer: ReturnType<typeof setInterval> | null = null;

  constructor(o: ServiceGroupOptions) {
    if (o.ranks.length < 1)
      throw new ToolError('E_CONFIG_INVALID', 'service group: expected one or more ranks', {
        hint: 'list the hosts under target.hosts',
      });
    this.ranks = o.ranks;
    this.o = o;
    this.onEvent = o.onEvent ?? ignoreEvents;
    this.renewedAt = o.ranks.map(() => 0);
  }

  /** Whether a rank failed to answer since `sinceMs` (a failure then says nothing about the config). */
  lostSince(sinceMs: number): boolean {
    return this.lostAt >= sinceMs;
  }

  // Plan the same changes on every rank and deploy them as one: the lease armed on every rank first; a lost host
  // (ssh timeout, refused, unreachable) is retried with backoff while its lease allows, then every rank still
  // reachable goes back to known-good (the lost one's own lease does the same on its host) and E_SSH_UNREACHABLE.
  async deployChanges(
    changes: Changes,
    why: string,
    signal?: AbortSignal,
    p: { environment?: Record<string, string | null>; timeoutStopSec?: number | null } = {},
  ): Promise<GroupReady> {
    for (;;) {
      try {
        if (this.o.lease) await this.armAll(this.o.lease);
        const plans = await this.plan(changes, p);
        return await this.deploy(plans, why, signal);
      } catch (e) {
        if (!isLostHost(e) || signal?.aborted) throw e;
        await this.retryOrRevert(e as Error, `the group change (${why})`);
      }
    }
  }

  // Every rank as it is now (versions, candidate in force, unit state), for looking before acting.
  look(): Promise<RankLook[]> {
    return Promise.all(this.ranks.map((c) => c.look()));
  }

  // The ranks that do not answer a short command now.
  async unreachableRanks(): Promise<number[]> {
    const r = await Promise.all(
      this.ranks.map(async (c, i) => {
        try {
          // Any answer counts, even a failed command; only no answer (a timeout, ssh's own failure) is a lost rank.
          const x = await c.host.exec(['true'], { timeoutMs: PROBE_TIMEOUT_MS });
          return x.timedOut ? i : -1;
        } catch (e) {
          return isLostHost(e) ? i : -1;
        }
      }),
    );
    const lost = r.filter((i) => i >= 0);
    if (lost.length) this.lostAt = Date.now();
    return lost;
  }

  // After a lost host: wait (with backoff) until every rank answers, while the lost ranks' leases allow; when they
  // do not come back in time, every reachable rank goes back to known-good and the error says what happened.
  private async retryOrRevert(e: Error, what: string): Promise<void> {
    this.lostAt = Date.now();
    const first = await this.unreachableRanks();
    const leaseMs = this.o.lease?.ms ?? NO_LEASE_WAIT_MS;
    const deadline = Math.max(
      Date.now() + PROBE_TIMEOUT_MS,
      Math.min(
        ...(first.length ? first : [0]).map((i) => (this.renewedAt[i] || Date.now()) + leaseMs - LEASE_MARGIN_MS),
      ),
    );
    const names = (ids: number[]) => ids.map((i) => `${this.ranks[i].host.name} (rank${i})`).join(', ');
    this.log(
      'warn',
      `${e.message}: ${first.length ? `${names(first)} lost` : 'a rank did not answer'} during ${what}; retrying until ${new Date(deadline).toISOString().slice(11, 19)} (the lease allows)`,
    );
    for (let attempt = 0; ; attempt++) {
      const lost = await this.unreachableRanks();
      if (!lost.length) {
        this.log('info', `every rank answers again: retrying ${what}`);
        return;
      }
      if (Date.now() + backoffMs(attempt) > deadline) {
        const reverted = await this.revertReachable(lost, what);
        throw lostHostError(
          `${names(lost)} lost during ${what} and not back within the lease (${Math.round(leaseMs / 1000)} s): ${reverted}; ${names(lost)}: its own lease restores known-good on its host`,
        );
      }
      this.log('info', `${names(lost)} still unreachable: next try in ${backoffMs(attempt) / 1000} s`);
      await (this.o.sleep ?? pause)(backoffMs(attempt));
    }
  }

  // Every reachable rank back to its known-good config (restarted unless it already runs it), without waiting for a
  // readiness that needs the lost peer; returns what was done, in words.
  private async revertReachable(lost: number[], what: string): Promise<string> {
    this.stopGroupRenewal();
    const done = await Promise.all(
      this.ranks.map(async (c, i) => {
        if (lost.includes(i)) return null;
        try {
          return `${c.host.name} (rank${i}) on ${describeVersion(await c.revertToGood(`a peer was lost during ${what}`))}`;
        } catch (err) {
          return `${c.host.name} (rank${i}) could not be rolled back: ${(err as Error).message}`;
        }
      }),
    );
    return done.filter(Boolean).join(', ') || 'no rank was reachable';
  }

  // Arm the lease on every rank before the first one changes (retried while a rank is lost; nothing changed yet),
  // then keep renewing it on every rank until the group confirms or rolls back.
  private async armAll(lease: LeaseOptions): Promise<void> {
    await Promise.all(
      this.ranks.map(async (c, i) => {
        await armLease(c.host, c.unit, lease);
        this.renewedAt[i] = Date.now();
      }),
    );
    this.startGroupRenewal(lease);
  }

  // Renew every rank's lease every lease/5, recording when each last succeeded.
  private startGroupRenewal(lease: LeaseOptions): void {
    if (this.renewTimer) return;
    const every = Math.max(1000, Math.floor(lease.ms / RENEWALS_PER_LEASE));
    this.renewTimer = setInterval(() => {
      this.ranks.forEach((c, i) => {
        renewLease(c.host, c.unit).then(
          (ok) => {
            if (ok) this.renewedAt[i] = Date.now();
            else this.lostAt = Date.now();
          },
          () => {
            this.lostAt = Date.now();
          },
        );
      });
    }, every);
    this.renewTimer.unref?.();
  }

  private stopGroupRenewal(): void {
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.renewTimer = null;
  }

  // Emit a log event.
  private log(level: 'info' | 'warn', message: string): void {
    this.onEvent({ type: 'log', ts: Date.now(), level, message });
  }

  /** rank0: the unit that serves the endpoint. */
  get rank0(): ServiceController {
    return this.ranks[0];
  }

  // Plan the same engine changes on every rank (each on its own unit: its rank flags stay its own).
  plan(
    changes: Changes,
    p: { environment?: Record<string, string | null>; timeoutStopSec?: number | null } = {},
  ): Promise<DeployPlan[]> {
    return Promise.all(
      this.ranks.map((c, i) =>
        c.plan(changes, p).catch((e: unknown) => {
          throw this.onRank(e, i);
        }),
      ),
    );
  }

  // A rank's refusal named with its rank and host (one rank's foreign drop-in refuses the whole group's change).
  private onRank(e: unknown, i: number): unknown {
    if (this.ranks.length < 2 || !(e instanceof ToolError)) return e;
    const host = this.ranks[i].host.name;
    const message = e.message.startsWith(`${host}: `) ? e.message.slice(host.length + 2) : e.message;
    return new ToolError(e.code, `rank${i} ${host}: ${message}`, { hint: e.hint, cause: e });
  }

  // Deploy the plans (one per rank; a noop plan still restarts its rank), restart in rank order and follow every
  // rank: ready when rank0 is ready and no worker failed, else the first failure with the verdict over all journals.
  async deploy(plans: (DeployPlan | null)[], why: string, signal?: AbortSignal): Promise<GroupReady> {
    const marks = await this.markStarts();
    await this.restartInOrder(plans, why, signal);
    const out = await this.awaitAll(signal);
    if (out.status === 'ready') return out;
    // A start that failed while a rank did not answer says nothing about the config: a lost host, retried.
    const lost = await this.unreachableRanks();
    if (lost.length)
      throw lostHostError(
        `${lost.map((i) => `${this.ranks[i].host.name} (rank${i})`).join(', ')} did not answer when the group start failed (${out.failed.reason})`,
      );
    return { ...out, verdict: await this.diagnose(marks, out.rank, out.failed) };
  }

  // The workers that are not running, named; a worker still starting (activating) gets up to graceMs to become active.
  async downWorkers(graceMs = 0): Promise<string[]> {
    const deadline = Date.now() + graceMs;
    for (;;) {
      const states = await Promise.all(
        this.ranks.slice(1).map(async (c) => ({ c, s: await showUnit(c.host, c.unit) })),
      );
      const starting = states.filter(({ s }) => isStartingOrUp(s) && s.activeState !== 'active');
      if (!starting.length || Date.now() >= deadline) {
        return states
          .filter(({ s }) => s.activeState !== 'active')
          .map(({ c, s }) => `${nameOfRank(c)} is ${s.activeState}/${s.subState}`);
      }
      await pause(WORKER_POLL_MS);
    }
  }

  // Whether the group is up now: rank0 healthy and every worker active.
  async isUp(): Promise<boolean> {
    const st = await this.rank0.status();
    return st.health.ok && (await this.downWorkers()).length === 0;
  }

  // What a rollback would do on every rank.
  planRollback(to?: Version): Promise<RollbackPlan[]> {
    return Promise.all(
      this.ranks.map((c, i) =>
        c.planRollback(to).catch((e: unknown) => {
          throw this.onRank(e, i);
        }),
      ),
    );
  }

  // Stop every rank, then roll every rank back at once (a worker retries reaching rank0's store until it listens);
  // done when rank0 is ready and every worker still runs (a worker still starting gets WORKER_SETTLE_MS). A worker's
  // rollback never sees a ready line (no endpoint), so it is followed only until rank0 is ready or it fails.
  // A lost host is retried with backoff while the lease allows; then the reachable ranks go back to known-good
  // without waiting for the lost peer (E_SSH_UNREACHABLE); the ranks are never stopped for a lost host.
  async rollback(
    w: StopOptions & { readyTimeoutMs?: number; to?: Version; why?: string } = {},
  ): Promise<{ version: Version; elapsedMs: number }> {
    for (;;) {
      try {
        return await this.rollbackOnce(w);
      } catch (e) {
        if (!isLostHost(e) || w.signal?.aborted) throw e;
        await this.retryOrRevert(e as Error, 'the rollback of the group');
      }
    }
  }

  private async rollbackOnce(
    w: StopOptions & { readyTimeoutMs?: number; to?: Version; why?: string },
  ): Promise<{ version: Version; elapsedMs: number }> {
    // Refuse before stopping anything: a rank whose later drop-in (not spectune's) overrides spectune's would not
    // return to known-good, and the group would be left stopped.
    await this.planRollback(w.to);
    this.stopGroupRenewal();
    await this.stopAll(w.why ?? 'stop the failing config before rolling back');
    const ac = linkedAbort(w.signal);
    const waits = this.ranks.map((c, i) =>
      endOf(i, () => c.rollback({ signal: ac.signal, readyTimeoutMs: w.readyTimeoutMs, to: w.to }), ac.signal),
    );
    const first = await firstDecisive(waits, (e) => !('r' in e) || e.rank === 0);
    ac.abort(new Error(first && 'r' in first ? 'rank0 is ready' : 'a rank failed its rollback'));
    await Promise.all(waits);
    if (!first || !('r' in first)) {
      // A rank that did not answer is no failed rollback: the caller retries; a diagnosed failure stops the group.
      if (first && 'error' in first && isLostHost(first.error)) throw first.error;
      await this.stopAll('rollback of the group failed').catch(() => {});
      throw first && 'error' in first
        ? first.error
        : new RollbackFailedError('rollback of the group ended without a verdict', null);
    }
    const down = await this.downWorkers(WORKER_SETTLE_MS);
    if (down.length)
      throw new RollbackFailedError(`rollback of the group: rank0 is ready but ${down.join('; ')}`, null);
    return first.r;
  }

  // Stop every rank (systemctl stop, reset-failed).
  async stopAll(why: string): Promise<void> {
    await Promise.all(this.ranks.map((c) => c.stopLoop(why)));
  }

  // Mark what every rank runs now as its known-good version, on every rank or none: first every rank's candidate
  // must still be in force (its lease not lapsed; a lost host is retried while the lease allows), then all are
  // confirmed at once. A rank whose lease lapsed meanwhile (its host restored known-good) means no rank keeps the
  // candidate: every rank goes back to the known-good it had before (E_LEASE_LAPSED).
  async markGood(): Promise<void> {
    for (;;) {
      try {
        const lapsed = await this.lapsedRanks();
        if (lapsed.length) {
          this.stopGroupRenewal();
          await this.rollback({ why: 'a rank lost its candidate before the group confirmed it' });
          throw new ToolError(
            'E_LEASE_LAPSED',
            `${lapsed.join(', ')}: the lease lapsed before the group confirmed the candidate: every rank went back to known-good`,
            {
              hint: 'spectune could not renew it in time (network cut or a pause); run the command again (tune: --resume)',
            },
          );
        }
        break;
      } catch (e) {
        if (!isLostHost(e)) throw e;
        await this.retryOrRevert(e as Error, 'the confirmation of the group');
      }
    }
    const before = await Promise.all(this.ranks.map((c) => c.look()));
    this.stopGroupRenewal();
    const ends = await Promise.allSettled(this.ranks.map((c) => c.markGood()));
    const failed = ends.map((r, i) => (r.status === 'rejected' ? i : -1)).filter((i) => i >= 0);
    if (!failed.length) return;
    // Confirmed on some ranks only: put every rank back on the known-good it had before, so that none runs a config
    // its peer does not.
    const why = (ends[failed[0]] as PromiseRejectedResult).reason as Error;
    this.log(
      'warn',
      `the confirmation failed on ${failed.map((i) => nameOfRank(this.ranks[i])).join(', ')} (${why.message}): every rank goes back to its previous known-good`,
    );
    await Promise.all(this.ranks.map((c, i) => c.rollbackTo(before[i].good ?? 'none').catch(() => {})));
    throw why;
  }

  // The ranks whose provisional candidate is gone (the lease lapsed); renews the others' leases on the way.
  private async lapsedRanks(): Promise<string[]> {
    if (!this.o.lease) return [];
    const lapsed = await Promise.all(
      this.ranks.map(async (c, i) => {
        const ok = await c.candidateStillInForce();
        if (ok) this.renewedAt[i] = Date.now();
        return ok ? null : nameOfRank(c);
      }),
    );
    return lapsed.filter((x): x is string => x !== null);
  }

  // Mark each rank's journal before a group start.
  private markStarts(): Promise<StartMark[]> {
    return Promise.all(
      this.ranks.map(async (c) => {
        const [cursor, clockOffsetMs] = await Promise.all([
          lastJournalCursor(c.host, c.unit),
          measureClockOffsetMs(c.host),
        ]);
        return { cursor, clockOffsetMs, startedAt: Date.now() };
      }),
    );
  }

  // Order: rank0 first (drained while its group is still intact, and it hosts the dist-init store the workers
  // connect to), then the workers right after it, without waiting for rank0's readiness: rank0 cannot become ready
  // before all ranks joined, and an old worker that lost its peer must not outlive it.
  private async restartInOrder(plans: (DeployPlan | null)[], why: string, signal?: AbortSignal): Promise<void> {
    const version = await this.groupVersion(plans);
    for (const [i, ctl] of this.ranks.entries()) {
      const plan = plans[i];
      // With a group version every rank writes it (a rank whose drop-in already says this too): one number, one config.
      if (plan && (!plan.noop || version !== undefined)) await ctl.apply(plan, { signal }, { version });
      else await ctl.restart(i === 0 ? why : `restart with rank0 (${why})`, { signal });
    }
  }

  // One version number for the group's change: the largest next free number over the ranks, written on every rank
  // when any of them changes (a rank's own history never makes the ranks' numbers drift apart for the same config).
  private async groupVersion(plans: (DeployPlan | null)[]): Promise<number | undefined> {
    if (this.ranks.length < 2 || plans.every((p) => !p || p.noop)) return undefined;
    const next = await Promise.all(
      this.ranks.map((c, i) => (plans[i] ? c.prepareVersion(plans[i]!) : Promise.resolve(0))),
    );
    return pickGroupVersion(next);
  }

  // Follow every rank's start at once: ready when rank0 is ready (workers serve no HTTP: they count as failed when
  // their unit fails, restarts or logs a fatal line); the first rank to fail fails the group, the others get a short
  // window to log their own end, then every rank is stopped.
  private async awaitAll(
    signal?: AbortSignal,
  ): Promise<{ status: 'ready' } | { status: 'failed'; rank: number; failed: FailedStart }> {
    const ac = linkedAbort(signal);
    const waits = this.ranks.map((c, i) => endOf(i, () => c.waitReady({ signal: ac.signal }), ac.signal));
    const settleAll = async (why: string) => {
      ac.abort(new Error(why));
      return Promise.all(waits);
    };
    const first = await firstDecisive(waits, (e) => !('r' in e) || e.r.status === 'failed' || e.rank === 0);
    if (!first || 'aborted' in first) {
      await settleAll('aborted');
      signal?.throwIfAborted();
      throw new ToolError('E_SERVICE_FAILED', 'group start: no rank reached a verdict', {
        hint: 'check `spectune status` on every host',
      });
    }
    if ('error' in first) {
      await settleAll('a rank could not be followed');
      throw first.error;
    }
    if (first.r.status === 'ready') {
      const ends = await settleAll('rank0 is ready');
      const failedWorker = ends.find((e): e is { rank: number; r: FailedStart } => 'r' in e && e.r.status === 'failed');
      return failedWorker ? this.stopRest(ends, failedWorker) : { status: 'ready' };
    }
    await Promise.race([Promise.all(waits), pause(this.o.echoWindowMs ?? ECHO_WINDOW_MS)]);
    const ends = await settleAll('a rank failed');
    signal?.throwIfAborted();
    return this.stopRest(ends, first as { rank: number; r: FailedStart });
  }

  // Stop the rest of the group after one rank failed (a rank0 left waiting for a dead worker would hang until its
  // deadline); a rank whose own wait ended failed was already stopped by its controller when it was still looping.
  private async stopRest(ends: RankEnd<ReadyResult>[], failed: { rank: number; r: FailedStart }) {
    const handled = new Set(ends.filter((e) => 'r' in e && e.r.status === 'failed').map((e) => e.rank));
    const why = `rank${failed.rank} (${nameOfRank(this.ranks[failed.rank])}) failed: stop the rest of the group`;
    await Promise.all(this.ranks.map((c, i) => (handled.has(i) ? Promise.resolve() : c.stopLoop(why))));
    return { status: 'failed' as const, rank: failed.rank, failed: failed.r };
  }

  // Diagnose the failed group start from every rank's journal entries (and kernel log): a worker's NCCL abort after
  // rank0 died is attributed to rank0's failure by the diagnoser's cross-node ordering.
  private async diagnose(marks: StartMark[], rank: number, failed: FailedStart): Promise<Verdict> {
    const failedCtl = this.ranks[rank];
    if (this.ranks.length === 1) return failed.verdict;
    let group: Verdict | null = null;
    try {
      const read = await Promise.all(
        this.ranks.map(async (c, i) => {
          const since = `@${Math.floor((marks[i].startedAt + marks[i].clockOffsetMs) / 1000)}`;
          const [entries, kernel] = await Promise.all([
            readJournalAfter(c.host, c.unit, marks[i].cursor),
            readKernelLog(c.host, since),
          ]);
          return { name: `journal:${c.host.name}:${c.unit}`, entries, kernel };
        }),
      );
      const kernel = read.flatMap((t) => t.kernel);
      const inputs = [
        ...read.filter((t) => t.entries.length).map(({ name, entries }) => ({ name, entries })),
        ...(kernel.length ? [{ name: 'kernel', entries: kernel }] : []),
      ];
      const actions = this.o.actionLog
        ? (await Promise.all(this.ranks.map((c) => this.o.actionLog!.read({ unit: c.unit, host: c.host.name })))).flat()
        : [];
      const state = await showUnit(failedCtl.host, failedCtl.unit);
      this.onEvent({
        type: 'log',
        ts: Date.now(),
        level: 'info',
        message: `diagnosing the failed group start from ${inputs.map((i) => i.name).join(', ')}`,
      });
      const c = this.o.collaborators ?? diagnoseCollaborators;
      group = c.diagnose(inputs, { state: state.raw, actions, engine: failedCtl.engine, unit: failedCtl.unit }).verdict;
    } catch (e) {
      this.onEvent({
        type: 'log',
        ts: Date.now(),
        level: 'warn',
        message: `diagnosis over all ranks failed: ${(e as Error).message}`,
      });
    }
    const verdict = mergeGroupVerdict(group, failed, nameOfRank(failedCtl));
    this.onEvent({ type: 'diagnosis', ts: Date.now(), verdict });
    return verdict;
  }
}

// A version in words ("known-good version 3", "the unit's own config").
function describeVersion(v: Version): string {
  return v === 'none' ? "the unit's own config" : `known-good version ${v}`;
}

// Build a group over controllers, rank0 first.
export function createServiceGroup(o: ServiceGroupOptions): ServiceGroup {
  return new ServiceGroup(o);
}
