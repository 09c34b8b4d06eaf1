// The service port over a model that spans several hosts (rank0 serves HTTP and hosts the dist-init store, the
// other ranks join it): every deploy goes to every rank's unit, all ranks restart together, a failure is diagnosed
// from every rank's journal and rolled back on every rank. The single-host port (tune-service.ts) is untouched.
import { namesNoFailure } from '../diagnose/index.js';
import type { Verdict } from '../diagnose/types.js';
import type { EngineName } from '../engines/types.js';
import { ToolError } from '../errors.js';
import type { EventSink } from '../tune/events.js';
import {
  RollbackFailedError, diagnoseCollaborators, type ActionLog, type Collaborators, type DeployPlan, type FailedStart,
  type ReadyResult, type ServiceController,
} from '../service/index.js';
import { renderShort } from '../service/journal.js';
import { isStartingOrUp } from '../service/show.js';
import { lastJournalCursor, measureClockOffsetMs, readJournalAfter, readKernelLog, showUnit } from '../service/systemd.js';
import type { TuneConfig } from '../tune/types.js';
import { createControllerServicePort, pickConfig, readCapacity, readUnitSnapshot } from './tune-service.js';
import type { DeployOutcome, EndState, TuneServicePort } from './tune-ports.js';

/** After the first rank fails, how long the others get to log their own end (the echo the diagnosis attributes). */
const ECHO_WINDOW_MS = 3000;
/** A deploy restarts every rank once; the campaign counts it as one restart of the service, as for one host. */
const RESTARTS_PER_DEPLOY = 1;
/** After a rollback, how long a worker still starting (activating) gets to become active once rank0 is ready. */
const WORKER_SETTLE_MS = 30_000;
const WORKER_POLL_MS = 250;

/** What the multi-host port is built from; ranks[0] is rank0 (the endpoint), the rest are workers. */
export interface MultiServiceOptions {
  ranks: ServiceController[];
  endpoint: string;
  engine: EngineName;
  onEvent: EventSink;
  /** The action log the controllers write (attributes the stops in the diagnosis). */
  actionLog?: ActionLog;
  collaborators?: Collaborators;
  echoWindowMs?: number;
}

/** Where each rank's journal stood before a group start: everything after it belongs to that start. */
interface StartMark { cursor: string | null; startedAt: number; clockOffsetMs: number }

/** How one rank's wait ended: its result, an error, or aborted (the group no longer needed it). */
type RankEnd<T> = { rank: number; r: T } | { rank: number; error: unknown } | { rank: number; aborted: true };

// The single-host port's wording for a rank: "host unit".
function nameOf(ctl: ServiceController): string {
  return `${ctl.host.name} ${ctl.unit}`;
}

// The group verdict: the diagnosis over every rank's journal, kept a crash loop when the failed rank looped.
export function mergeGroupVerdict(group: Verdict | null, failed: FailedStart, failedName: string): Verdict {
  // A group diagnosis that names no failure says less than the failed rank's own verdict.
  if (!group || namesNoFailure(group)) return failed.verdict;
  const summary = `${failedName} failed first; over all ranks' journals: ${group.summary}`;
  if (failed.verdict.class !== 'crash_loop' || group.class === 'crash_loop') return { ...group, summary };
  return { ...group, class: 'crash_loop', cause: group.class, summary: `crash loop on ${failedName}: each start dies of ${group.class}. ${summary}` };
}

// Drop the controllers' own per-rank diagnosis events: the group port emits the one verdict that counts.
export function withoutRankDiagnoses(onEvent: EventSink): EventSink {
  return (e) => { if (e.type !== 'diagnosis') onEvent(e); };
}

// Mark each rank's journal before a group start.
function markStarts(ranks: ServiceController[]): Promise<StartMark[]> {
  return Promise.all(ranks.map(async (c) => {
    const [cursor, clockOffsetMs] = await Promise.all([lastJournalCursor(c.host, c.unit), measureClockOffsetMs(c.host)]);
    return { cursor, clockOffsetMs, startedAt: Date.now() };
  }));
}

// Restart the group on the plans. Order: rank0 first (drained while its group is still intact, and it hosts the
// dist-init store the workers connect to), then the workers right after it, without waiting for rank0's readiness:
// rank0 cannot become ready before all ranks joined, and an old worker that lost its peer must not outlive it.
// A noop plan still restarts its rank: SGLang multi-node ranks only come up together.
async function restartGroup(ranks: ServiceController[], plans: (DeployPlan | null)[], why: string, signal?: AbortSignal): Promise<void> {
  for (const [i, ctl] of ranks.entries()) {
    const plan = plans[i];
    if (plan && !plan.noop) await ctl.apply(plan, { signal });
    else await ctl.restart(i === 0 ? why : `restart with rank0 (${why})`, { signal });
  }
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
async function firstDecisive<T>(waits: Promise<RankEnd<T>>[], decides: (e: RankEnd<T>) => boolean): Promise<RankEnd<T> | null> {
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

// The workers that are not running, named; a worker still starting (activating) gets up to graceMs to become active.
async function downWorkers(ranks: ServiceController[], graceMs = 0): Promise<string[]> {
  const deadline = Date.now() + graceMs;
  for (;;) {
    const states = await Promise.all(ranks.slice(1).map(async (c) => ({ c, s: await showUnit(c.host, c.unit) })));
    const starting = states.filter(({ s }) => isStartingOrUp(s) && s.activeState !== 'active');
    if (!starting.length || Date.now() >= deadline) {
      return states.filter(({ s }) => s.activeState !== 'active').map(({ c, s }) => `${nameOf(c)} is ${s.activeState}/${s.subState}`);
    }
    await pause(WORKER_POLL_MS);
  }
}

/** The group's outcome: ready, or the first rank that failed (fail fast: the others are stopped). */
type GroupOutcome = { status: 'ready' } | { status: 'failed'; rank: number; failed: FailedStart };

// Follow every rank's start at once: ready when rank0 is ready (workers serve no HTTP: they count as failed when
// their unit fails, restarts or logs a fatal line); the first rank to fail fails the group, the others get a short
// window to log their own end, then every rank is stopped.
async function awaitGroup(ranks: ServiceController[], echoWindowMs: number, signal?: AbortSignal): Promise<GroupOutcome> {
  const ac = linkedAbort(signal);
  const waits = ranks.map((c, i) => endOf(i, () => c.waitReady({ signal: ac.signal }), ac.signal));
  const settleAll = async (why: string) => { ac.abort(new Error(why)); return Promise.all(waits); };
  const first = await firstDecisive(waits, (e) => !('r' in e) || e.r.status === 'failed' || e.rank === 0);
  if (!first || 'aborted' in first) { await settleAll('aborted'); signal?.throwIfAborted(); throw new ToolError('E_SERVICE_FAILED', 'group start: no rank reached a verdict', { hint: 'check `spectune status` on every host' }); }
  if ('error' in first) { await settleAll('a rank could not be followed'); throw first.error; }
  if (first.r.status === 'ready') {
    const ends = await settleAll('rank0 is ready');
    const failedWorker = ends.find((e): e is { rank: number; r: FailedStart } => 'r' in e && e.r.status === 'failed');
    return failedWorker ? stopGroup(ranks, ends, failedWorker) : { status: 'ready' };
  }
  await Promise.race([Promise.all(waits), pause(echoWindowMs)]);
  const ends = await settleAll('a rank failed');
  signal?.throwIfAborted();
  return stopGroup(ranks, ends, first as { rank: number; r: FailedStart });
}

// Stop the rest of the group after one rank failed (a rank0 left waiting for a dead worker would hang until its
// deadline); a rank whose own wait ended failed was already stopped by its controller when it was still looping.
async function stopGroup(ranks: ServiceController[], ends: RankEnd<ReadyResult>[], failed: { rank: number; r: FailedStart }): Promise<GroupOutcome> {
  const handled = new Set(ends.filter((e) => 'r' in e && e.r.status === 'failed').map((e) => e.rank));
  const why = `rank${failed.rank} (${nameOf(ranks[failed.rank])}) failed: stop the rest of the group`;
  await Promise.all(ranks.map((c, i) => (handled.has(i) ? Promise.resolve() : c.stopLoop(why))));
  return { status: 'failed', rank: failed.rank, failed: failed.r };
}

/** The multi-host port's state between calls. */
class MultiServicePort implements TuneServicePort {
  private readonly ranks: ServiceController[];
  private readonly o: MultiServiceOptions;

  constructor(o: MultiServiceOptions) {
    if (o.ranks.length < 2) throw new ToolError('E_CONFIG_INVALID', 'multi-host service: expected two or more ranks', { hint: 'use the single-host port for one host' });
    this.ranks = o.ranks;
    this.o = o;
  }

  async readConfig(keys: string[]) {
    return pickConfig(await this.ranks[0].currentSettings(), keys);
  }

  async waitHealthy(signal?: AbortSignal) {
    const single = await createControllerServicePort(this.ranks[0], this.o.endpoint).waitHealthy(signal);
    if (!single.healthy) return single;
    const down = await downWorkers(this.ranks);
    return down.length ? { healthy: false, capacity: null, reason: down.join('; ') } : single;
  }

  async deploy(config: TuneConfig, why: string, signal?: AbortSignal): Promise<DeployOutcome> {
    const plans = await Promise.all(this.ranks.map((c) => c.plan(config)));
    if (plans.every((p) => p.noop)) {
      const healthy = await this.waitHealthyNow();
      if (healthy) return { ready: true, capacity: await readCapacity(this.o.endpoint, this.o.engine), restarts: 0 };
    }
    const marks = await markStarts(this.ranks);
    await restartGroup(this.ranks, plans, `apply ${JSON.stringify(config)} (${why})`, signal);
    const out = await awaitGroup(this.ranks, this.o.echoWindowMs ?? ECHO_WINDOW_MS, signal);
    if (out.status === 'ready') return { ready: true, capacity: await readCapacity(this.o.endpoint, this.o.engine), restarts: RESTARTS_PER_DEPLOY };
    const verdict = await this.diagnoseGroup(marks, out.rank, out.failed);
    return { ready: false, reason: `${nameOf(this.ranks[out.rank])}: ${out.failed.reason}`, verdict, restarts: RESTARTS_PER_DEPLOY };
  }

  // After a failure: stop every rank, then roll every rank back at once (a worker retries reaching rank0's store
  // until it listens); done when rank0 is ready and every worker still runs. A worker's rollback never sees a ready
  // line (no endpoint), so it is followed only until rank0 is ready or it fails.
  async recover(): Promise<void> {
    await Promise.all(this.ranks.map((c) => c.stopLoop('stop the failing config before rolling back')));
    const ac = new AbortController();
    const waits = this.ranks.map((c, i) => endOf(i, () => c.rollback({ signal: ac.signal }), ac.signal));
    const first = await firstDecisive(waits, (e) => !('r' in e) || e.rank === 0);
    ac.abort(new Error(first && 'r' in first ? 'rank0 is ready' : 'a rank failed its rollback'));
    await Promise.all(waits);
    if (!first || !('r' in first)) {
      await Promise.all(this.ranks.map((c) => c.stopLoop('rollback of the group failed').catch(() => {})));
      throw first && 'error' in first ? first.error : new RollbackFailedError('rollback of the group ended without a verdict', null);
    }
    const down = await downWorkers(this.ranks, WORKER_SETTLE_MS);
    if (down.length) throw new RollbackFailedError(`rollback of the group: rank0 is ready but ${down.join('; ')}`, null);
  }

  async markGood(): Promise<void> {
    await Promise.all(this.ranks.map((c) => c.markGood()));
  }

  async readEndState(keys: string[]): Promise<EndState> {
    const [first, units] = await Promise.all([createControllerServicePort(this.ranks[0], this.o.endpoint).readEndState!(keys), Promise.all(this.ranks.map(readUnitSnapshot))]);
    return { ...first, units };
  }

  async describeDeployed(): Promise<string> {
    const parts = await Promise.all(this.ranks.map((c) => createControllerServicePort(c, this.o.endpoint).describeDeployed()));
    return parts.map((p, i) => `# rank${i}\n${p}`).join('\n\n');
  }

  // Whether the group is up now: rank0 healthy and every worker active.
  private async waitHealthyNow(): Promise<boolean> {
    const st = await this.ranks[0].status();
    return st.health.ok && (await downWorkers(this.ranks)).length === 0;
  }

  // Diagnose the failed group start from every rank's journal (and kernel log): a worker's NCCL abort after rank0
  // died is attributed to rank0's failure by the diagnoser's cross-node ordering.
  private async diagnoseGroup(marks: StartMark[], rank: number, failed: FailedStart): Promise<Verdict> {
    const failedCtl = this.ranks[rank];
    let group: Verdict | null = null;
    try {
      const texts = await Promise.all(this.ranks.map(async (c, i) => {
        const since = `@${Math.floor((marks[i].startedAt + marks[i].clockOffsetMs) / 1000)}`;
        const [entries, kernel] = await Promise.all([readJournalAfter(c.host, c.unit, marks[i].cursor), readKernelLog(c.host, since)]);
        return { name: `journal:${c.host.name}:${c.unit}`, text: renderShort(entries), kernel };
      }));
      const kernel = texts.map((t) => t.kernel).filter(Boolean).join('');
      const inputs = [...texts.filter((t) => t.text).map(({ name, text }) => ({ name, text })), ...(kernel ? [{ name: 'kernel', text: kernel }] : [])];
      const actions = this.o.actionLog ? (await Promise.all(this.ranks.map((c) => this.o.actionLog!.read({ unit: c.unit, host: c.host.name })))).flat() : [];
      const state = await showUnit(failedCtl.host, failedCtl.unit);
      this.o.onEvent({ type: 'log', ts: Date.now(), level: 'info', message: `diagnosing the failed group start from ${inputs.map((i) => i.name).join(', ')}` });
      const c = this.o.collaborators ?? diagnoseCollaborators;
      group = c.diagnose(inputs, { state: state.raw, actions, engine: this.o.engine, unit: failedCtl.unit }).verdict;
    } catch (e) {
      this.o.onEvent({ type: 'log', ts: Date.now(), level: 'warn', message: `diagnosis over all ranks failed: ${(e as Error).message}` });
    }
    const verdict = mergeGroupVerdict(group, failed, nameOf(failedCtl));
    this.o.onEvent({ type: 'diagnosis', ts: Date.now(), verdict });
    return verdict;
  }
}

// The service port over the ranks of a multi-host model (ranks[0] = rank0).
export function createMultiHostServicePort(o: MultiServiceOptions): TuneServicePort {
  return new MultiServicePort(o);
}
