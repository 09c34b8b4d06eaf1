// The tune service port over a service group of several ranks (service/group.ts does the group work: deploy to
// every rank, restart in rank order, one verdict over all journals, roll back every rank). The single-host port
// (tune-service.ts) is untouched.
import type { EngineName } from '../engines/types.js';
import { ToolError } from '../errors.js';
import type { EventSink } from '../tune/events.js';
import {
  createServiceGroup,
  isLostHost,
  nameOfRank,
  type ActionLog,
  type Collaborators,
  type LeaseOptions,
  type ServiceController,
  type ServiceGroup,
} from '../service/index.js';
import type { TuneConfig } from '../tune/types.js';
import { createControllerServicePort, pickConfig, readCapacityOf, readUnitSnapshot } from './tune-service.js';
import type { DeployOutcome, EndState, TuneServicePort } from './tune-ports.js';

export { mergeGroupVerdict, withoutRankDiagnoses } from '../service/index.js';

/** A deploy restarts every rank once; the campaign counts it as one restart of the service, as for one host. */
const RESTARTS_PER_DEPLOY = 1;

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
  /** The commit-confirmed lease over the whole group (armed on every rank before the first one changes). */
  lease?: LeaseOptions;
}

/** The multi-host port's state between calls. */
class MultiServicePort implements TuneServicePort {
  private readonly group: ServiceGroup;
  private readonly endpoint: string;
  private readonly engine: EngineName;
  private readonly onEvent: EventSink;
  /** When the last deploy began, and each rank's main PID once it was ready (null: not ready). */
  private deployedAt = 0;
  private readyPids: (number | null)[] | null = null;

  constructor(o: MultiServiceOptions) {
    if (o.ranks.length < 2)
      throw new ToolError('E_CONFIG_INVALID', 'multi-host service: expected two or more ranks', {
        hint: 'use the single-host port for one host',
      });
    this.group = createServiceGroup({
      ranks: o.ranks,
      onEvent: o.onEvent,
      actionLog: o.actionLog,
      collaborators: o.collaborators,
      echoWindowMs: o.echoWindowMs,
      lease: o.lease,
    });
    this.endpoint = o.endpoint;
    this.onEvent = o.onEvent;
    this.engine = o.engine;
  }

  async readConfig(keys: string[]) {
    return pickConfig(await this.group.rank0.currentSettings(), keys);
  }

  async waitHealthy(signal?: AbortSignal) {
    const single = await createControllerServicePort(this.group.rank0).waitHealthy(signal);
    if (!single.healthy) return single;
    const down = await this.group.downWorkers();
    return down.length ? { healthy: false, capacity: null, reason: down.join('; ') } : single;
  }

  async deploy(config: TuneConfig, why: string, signal?: AbortSignal): Promise<DeployOutcome> {
    this.deployedAt = Date.now();
    this.readyPids = null;
    if (await this.isInForceAndUp(config)) return this.ready(0);
    const out = await this.group.deployChanges(config, `apply ${JSON.stringify(config)} (${why})`, signal);
    if (out.status === 'ready') return this.ready(RESTARTS_PER_DEPLOY);
    return {
      ready: false,
      reason: `${nameOfRank(this.group.ranks[out.rank])}: ${out.failed.reason}`,
      verdict: out.verdict,
      restarts: RESTARTS_PER_DEPLOY,
    };
  }

  // Whether every rank already runs the config and the group is up (a rank that does not answer: not known, no).
  private async isInForceAndUp(config: TuneConfig): Promise<boolean> {
    try {
      return (await this.group.plan(config)).every((p) => p.noop) && (await this.group.isUp());
    } catch (e) {
      if (isLostHost(e)) return false;
      throw e;
    }
  }

  // A ready group: its capacity, and every rank's main PID (to tell later whether it stayed up).
  private async ready(restarts: number): Promise<DeployOutcome> {
    this.readyPids = (await this.group.look()).map((l) => l.state.mainPid);
    return { ready: true, capacity: await readCapacityOf(this.group.rank0), restarts };
  }

  // Look before acting: a group whose every rank runs its known-good config, up, with rank0 healthy is left as it is
  // (no restart); otherwise every rank is rolled back (a lost host retried while the lease allows).
  async recover(why: string): Promise<void> {
    const look = await this.group.look();
    const goodAndUp = look.every(
      (l) => l.onGood && (l.state.activeState === 'active' || l.state.activeState === 'activating'),
    );
    if (goodAndUp && (await this.waitHealthy()).healthy) {
      const versions = look.map((l, i) => `rank${i} ${l.host} version ${l.current ?? 'none'}`).join(', ');
      this.onEvent({
        type: 'log',
        ts: Date.now(),
        level: 'info',
        message: `${why}: every rank already runs its known-good config and the group is healthy (${versions}): not restarted`,
      });
      return;
    }
    await this.group.rollback({ why: `${why}: stop the group before rolling every rank back` });
  }

  // A failed benchmark is not the config's fault when a rank was lost meanwhile (a network cut), or when every rank
  // is still the same process as when the group was ready, and rank0 healthy.
  async stayedUp(): Promise<boolean> {
    if (this.group.lostSince(this.deployedAt)) return true;
    if (!this.readyPids) return false;
    const look = await this.group.look();
    const same = look.every((l, i) => l.state.activeState === 'active' && l.state.mainPid === this.readyPids![i]);
    return same && (await this.group.rank0.status()).health.ok;
  }

  async markGood(): Promise<void> {
    await this.group.markGood();
  }

  async readEndState(keys: string[]): Promise<EndState> {
    const [first, units] = await Promise.all([
      createControllerServicePort(this.group.rank0).readEndState!(keys),
      Promise.all(this.group.ranks.map(readUnitSnapshot)),
    ]);
    return { ...first, units };
  }

  async describeDeployed(): Promise<string> {
    const parts = await Promise.all(this.group.ranks.map((c) => createControllerServicePort(c).describeDeployed()));
    return parts.map((p, i) => `# rank${i}\n${p}`).join('\n\n');
  }
}

// The service port over the ranks of a multi-host model (ranks[0] = rank0).
export function createMultiHostServicePort(o: MultiServiceOptions): TuneServicePort {
  return new MultiServicePort(o);
}
