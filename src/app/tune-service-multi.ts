// The tune service port over a service group of several ranks (service/group.ts does the group work: deploy to
// every rank, restart in rank order, one verdict over all journals, roll back every rank). The single-host port
// (tune-service.ts) is untouched.
import type { EngineName } from '../engines/types.js';
import { ToolError } from '../errors.js';
import type { EventSink } from '../tune/events.js';
import { createServiceGroup, nameOfRank, type ActionLog, type Collaborators, type ServiceController, type ServiceGroup } from '../service/index.js';
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
}

/** The multi-host port's state between calls. */
class MultiServicePort implements TuneServicePort {
  private readonly group: ServiceGroup;
  private readonly endpoint: string;
  private readonly engine: EngineName;

  constructor(o: MultiServiceOptions) {
    if (o.ranks.length < 2) throw new ToolError('E_CONFIG_INVALID', 'multi-host service: expected two or more ranks', { hint: 'use the single-host port for one host' });
    this.group = createServiceGroup({ ranks: o.ranks, onEvent: o.onEvent, actionLog: o.actionLog, collaborators: o.collaborators, echoWindowMs: o.echoWindowMs });
    this.endpoint = o.endpoint;
    this.engine = o.engine;
  }

  async readConfig(keys: string[]) {
    return pickConfig(await this.group.rank0.currentSettings(), keys);
  }

  async waitHealthy(signal?: AbortSignal) {
    const single = await createControllerServicePort(this.group.rank0, this.endpoint).waitHealthy(signal);
    if (!single.healthy) return single;
    const down = await this.group.downWorkers();
    return down.length ? { healthy: false, capacity: null, reason: down.join('; ') } : single;
  }

  async deploy(config: TuneConfig, why: string, signal?: AbortSignal): Promise<DeployOutcome> {
    const plans = await this.group.plan(config);
    if (plans.every((p) => p.noop) && await this.group.isUp()) return { ready: true, capacity: await readCapacityOf(this.group.rank0), restarts: 0 };
    const out = await this.group.deploy(plans, `apply ${JSON.stringify(config)} (${why})`, signal);
    if (out.status === 'ready') return { ready: true, capacity: await readCapacityOf(this.group.rank0), restarts: RESTARTS_PER_DEPLOY };
    return { ready: false, reason: `${nameOfRank(this.group.ranks[out.rank])}: ${out.failed.reason}`, verdict: out.verdict, restarts: RESTARTS_PER_DEPLOY };
  }

  async recover(): Promise<void> {
    await this.group.rollback();
  }

  async markGood(): Promise<void> {
    await this.group.markGood();
  }

  async readEndState(keys: string[]): Promise<EndState> {
    const [first, units] = await Promise.all([createControllerServicePort(this.group.rank0, this.endpoint).readEndState!(keys), Promise.all(this.group.ranks.map(readUnitSnapshot))]);
    return { ...first, units };
  }

  async describeDeployed(): Promise<string> {
    const parts = await Promise.all(this.group.ranks.map((c) => createControllerServicePort(c, this.endpoint).describeDeployed()));
    return parts.map((p, i) => `# rank${i}\n${p}`).join('\n\n');
  }
}

// The service port over the ranks of a multi-host model (ranks[0] = rank0).
export function createMultiHostServicePort(o: MultiServiceOptions): TuneServicePort {
  return new MultiServicePort(o);
}
