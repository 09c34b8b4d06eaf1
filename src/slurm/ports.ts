// What a Slurm campaign needs from outside the domain, as narrow ports (app/tune-slurm.ts binds them; tests too).
import type { BenchRun, RequestSample } from '../bench/types.js';
import type { EngineName } from '../engines/types.js';
import type { EventSink } from '../tune/events.js';
import type { ConstraintSpec, ObjectiveSpec, TrialRecord, TuneBudget, TuneConfig } from '../tune/types.js';
import type { SlurmClient } from './client.js';
import type { TrialJobSpec } from './types.js';

/** Benchmarks one endpoint (a trial job's node and port). */
export interface SlurmBenchPort {
  run(
    phase: 'warmup' | 'bench' | 'soak',
    onEvent: EventSink,
    signal?: AbortSignal,
  ): Promise<{ runs: BenchRun[]; samples: RequestSample[] }>;
}

/** The campaign store (the tuner's store port) plus the jobs by id. */
export interface SlurmStorePort {
  openCampaign(opts: { resume: boolean; name: string; spec: unknown; now: number }): {
    id: number;
    activeMs: number;
    trials: TrialRecord[];
    resumed: boolean;
  };
  markActive(campaignId: number, now: number): void;
  saveTrial(campaignId: number, trial: TrialRecord): void;
  saveSamples(campaignId: number, trialIndex: number, samples: RequestSample[]): void;
  finishCampaign(
    campaignId: number,
    result: { bestTrial: number | null; summary: string; now: number; endState?: null },
  ): void;
  recordJob(campaignId: number, trialIndex: number, jobId: string): void;
  updateJob(campaignId: number, jobId: string, u: { node?: string | null; state?: string; ended?: boolean }): void;
  /** Jobs not yet recorded as ended (a campaign killed mid-way left them). */
  openJobs(campaignId: number): { jobId: string; trialIndex: number }[];
  /** The node each trial's job ran on (a resumed campaign keeps its node factors and confirmation rule). */
  jobNodes(campaignId: number): Map<number, string | null>;
}

/** Everything the campaign runner needs. */
export interface SlurmCampaignDeps {
  client: SlurmClient;
  store: SlurmStorePort;
  propose(history: TrialRecord[]): { config: TuneConfig; reason: string; confirmProbe?: boolean } | null;
  benchFor(url: string): SlurmBenchPort;
  now(): number;
}

/** The campaign's goals, limits and how a trial becomes a job. */
export interface SlurmCampaignSpec {
  name: string;
  keys: string[];
  engine: EngineName;
  objective: ObjectiveSpec;
  constraints: ConstraintSpec[];
  budget: TuneBudget;
  noiseMargin: number;
  /** The operator's command line settings: the baseline trial. */
  baseline: TuneConfig;
  /** The job of one trial (its command patched with the config), not yet placed on a node. */
  jobFor(config: TuneConfig, index: number): Omit<TrialJobSpec, 'nodelist' | 'exclude' | 'name'>;
  /** Job names are `${jobPrefix}-t<trial>`: a resume finds jobs the store missed (killed between sbatch and the write). */
  jobPrefix: string;
  partition: string | null;
  /** At most this many trials at once (one per free node); 1 = sequential. */
  parallel: number;
  /** The URL the engine of a job on `node` answers on. */
  urlFor(node: string, port: number): string;
  healthPath: string;
  startTimeoutMs: number;
  readyTimeoutMs: number;
  /** Seconds the engine needs to drain on SIGTERM. */
  drainSec: number;
  /** How often job state and readiness are polled (default 500 ms; the model cluster polls faster). */
  pollMs?: number;
  /** Confirm the winner on a node other than the one it won on. */
  confirmElsewhere: boolean;
}
