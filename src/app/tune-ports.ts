// What the campaign runner needs from the outside world, as narrow ports; tune-wiring.ts binds them to the real
// service controller, benchmark, search and store, and the unit tests bind them to fakes.
import type { BenchRun, RequestSample } from '../bench/types.js';
import type { Verdict } from '../diagnose/index.js';
import type { CapacityFacts } from '../engines/types.js';
import type { EventSink } from '../tune/events.js';
import type { CampaignEndState } from '../store/index.js';
import type { Proposal } from '../tune/step.js';
import type {
  FeasibilityPrediction,
  ObjectiveSpec,
  ConstraintSpec,
  TrialRecord,
  TuneBudget,
  TuneConfig,
} from '../tune/types.js';

/** The result of deploying a config: ready, or failed with the diagnosis verdict. */
export type DeployOutcome =
  | { ready: true; capacity: CapacityFacts | null; restarts: number }
  | { ready: false; reason: string; verdict: Verdict | null; restarts: number };

/** The service under tuning (a systemd unit over SSH, or a local process-managed one). */
export interface TuneServicePort {
  /** The values of the tuned settings in force now (only the keys the space names). */
  readConfig(keys: string[]): Promise<TuneConfig>;
  /** Wait until the service in force is ready (baseline, resume); returns its capacity facts. */
  waitHealthy(signal?: AbortSignal): Promise<{ healthy: boolean; capacity: CapacityFacts | null; reason: string }>;
  /** Deploy a config as a drop-in, restart safely, wait for ready or fail fast (diagnosed). */
  deploy(config: TuneConfig, why: string, signal?: AbortSignal): Promise<DeployOutcome>;
  /** After a failure: stop any crash loop, roll back to the last known-good config, verify it healthy (throws if not). */
  recover(why: string): Promise<void>;
  /** Remember the config in force as known-good (the rollback target). */
  markGood(): Promise<void>;
  /** After a failed benchmark: whether the service deployed last is still the same process, active and healthy, so the
   *  failure was not the config's (a network cut, say); optional: a port without it counts every such failure. */
  stayedUp?(): Promise<boolean>;
  /** After a benchmark under which the service did not stay up: the verdict on the deployed lifetime's end, read from
   *  the journal since the deploy (null when it cannot be read); optional, like stayedUp. */
  diagnoseDeath?(): Promise<Verdict | null>;
  /** The winning unit text to print: the drop-in and the resulting ExecStart. */
  describeDeployed(): Promise<string>;
  /** What runs at the end (tuned settings, health, each unit's own and in-force ExecStart), stored for the report;
   *  optional: a port without it leaves the report to say the end state was not recorded. */
  readEndState?(keys: string[]): Promise<EndState>;
}

/** The end state as the service port reads it (the store adds when). */
export type EndState = Omit<CampaignEndState, 'ts'>;

/** Benchmarks the endpoint with the campaign's profile; `soak` may be longer. */
export interface TuneBenchPort {
  run(
    phase: 'warmup' | 'bench' | 'soak',
    onEvent: EventSink,
    signal?: AbortSignal,
  ): Promise<{ runs: BenchRun[]; samples: RequestSample[] }>;
}

/** The pure search, bound to its space and budget. */
export interface TuneSearchPort {
  propose(history: TrialRecord[]): Proposal | null;
  /** Memory feasibility prediction from earlier trials' capacity facts; null = no opinion. */
  predict(history: TrialRecord[], config: TuneConfig): FeasibilityPrediction | null;
}

/** A campaign as stored. */
export interface StoredCampaign {
  id: number;
  /** Time the tuner already ran on it in earlier runs (interruptions excluded); 0 for a new campaign. */
  activeMs: number;
  trials: TrialRecord[];
  resumed: boolean;
}

/** Durable campaign state: every trial is written when it starts and when it ends. */
export interface TuneStorePort {
  /** Create a campaign, or with resume=true reopen the latest unfinished one of this target (error if none); either way
   *  a new run span starts at `now`. */
  openCampaign(opts: { resume: boolean; name: string; spec: unknown; now: number }): StoredCampaign;
  /** The tuner is still running at `now`: extends the current run span (the hours budget counts only these spans). */
  markActive(campaignId: number, now: number): void;
  saveTrial(campaignId: number, trial: TrialRecord): void;
  saveSamples(campaignId: number, trialIndex: number, samples: RequestSample[]): void;
  /** The run failed before any trial of the campaign had a result: mark it (aborted, "never started") so that it hides
   *  no other campaign from report or --resume; a campaign with a trial result is left as it is. Optional. */
  markNeverStarted?(campaignId: number, why: string): void;
  finishCampaign(
    campaignId: number,
    result: { bestTrial: number | null; summary: string; now: number; endState?: EndState | null },
  ): void;
}

/** The campaign's goals and limits. */
export interface TuneSpec {
  name: string;
  /** Setting keys the search space varies. */
  keys: string[];
  objective: ObjectiveSpec;
  constraints: ConstraintSpec[];
  budget: TuneBudget;
  /** The search's noise margin: the winner is picked by the search's rule (a tie within it goes to the safer config). */
  noiseMargin: number;
  /** Deploy the first config the memory predictor refuses anyway, once, to confirm the prediction (demo, --confirm-probes). */
  confirmFirstRefusal?: boolean;
  /** The campaign runs on spectune's SIMULATED engine (`spectune demo`); stored with the campaign, shown in every summary and report. */
  simulated?: boolean;
  /** Where the campaign is stored (shown in the start banner); omitted when not a file. */
  storePath?: string;
}

/** Everything runCampaign needs. */
export interface TuneDeps {
  service: TuneServicePort;
  bench: TuneBenchPort;
  search: TuneSearchPort;
  store: TuneStorePort;
  now: () => number;
}
