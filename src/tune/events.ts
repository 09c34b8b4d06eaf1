// The one typed event stream: every domain's events plus the campaign's own; the CLI, the store, the reports and
// any UI render these.
import type { BenchEvent } from '../bench/events.js';
import type { Verdict } from '../diagnose/index.js';
import type { Sink, TrialPhase } from '../events.js';
import type { ServiceEvent } from '../service/events.js';

export type { TrialPhase } from '../events.js';

/** What a tuning campaign reports about its trials. `trial` is the 1-based trial number the summary, the store (seq)
 *  and the report use. */
export type CampaignEvent =
  | {
      type: 'trial:start';
      ts: number;
      campaignId: number;
      trial: number;
      config: Record<string, unknown>;
      reason: string;
    }
  | { type: 'trial:phase'; ts: number; trial: number; phase: TrialPhase; expectedMs: number | null }
  | {
      type: 'trial:end';
      ts: number;
      trial: number;
      status: 'ok' | 'violates' | 'failed' | 'skipped' | 'infeasible';
      objective: number | null;
      verdict: Verdict | null;
      /** The constraints a measured trial broke (status 'violates'), as the report words them. */
      violations?: string[];
      /** The objective's unit ("tok/s per request", "ms"): every objective figure is shown with it. */
      unit?: string;
    }
  /** A run of a campaign begins (new or resumed): the start banner, and the budget the progress lines count down. */
  | {
      type: 'campaign:start';
      ts: number;
      campaignId: number;
      resumed: boolean;
      store: string | null;
      budget: { maxTrials: number; maxHours: number };
      trialsDone: number;
      activeMs: number;
    }
  | {
      type: 'campaign:best';
      ts: number;
      trial: number;
      config: Record<string, unknown>;
      objective: number;
      unit?: string;
    }
  /** A Slurm trial job changed: submitted, running on a node, ending, ended (with its final state). */
  | {
      type: 'slurm:job';
      ts: number;
      trial: number | null;
      jobId: string;
      node: string | null;
      state: string;
      message: string;
    }
  | {
      type: 'campaign:end';
      ts: number;
      campaignId: number;
      bestConfig: Record<string, unknown> | null;
      summary: string;
    };

/** Every progress event spectune emits. `ts` is epoch milliseconds. */
export type SpectuneEvent = BenchEvent | ServiceEvent | CampaignEvent;

/** A consumer of events. */
export type EventSink = Sink<SpectuneEvent>;
