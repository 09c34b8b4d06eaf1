import { describe, expect, it } from 'vitest';
import type { CampaignResult } from '../../tune/result.js';
import type { TrialRecord } from '../../tune/types.js';
import { formatChatSummary } from './chat.js';

// A trial record with only what the summary reads.
function trial(
  index: number,
  steps: number,
  status: TrialRecord['status'],
  objective: number | null,
  extra: Partial<TrialRecord> = {},
): TrialRecord {
  return {
    index,
    kind: index === 0 ? 'baseline' : 'search',
    config: { speculative_num_steps: steps },
    status,
    reason: '',
    objective,
    constraintsOk: status === 'ok' ? true : null,
    violations: [],
    runs: [],
    verdict: null,
    prediction: null,
    capacity: null,
    restarts: 0,
    startedAt: 1_000 + index * 60_000,
    endedAt: 1_000 + index * 60_000 + 50_000,
    ...extra,
  };
}

describe('formatChatSummary (issue 19)', () => {
  it('says winner vs baseline with %, trials, restarts, failures with verdicts and time in three lines', () => {
    const oom = {
      class: 'crash_loop',
      cause: 'kv_cache_oom',
      confidence: 'high',
      summary: '',
      evidence: [],
      ruledOut: [],
      remediation: [],
    } as const;
    const trials = [
      trial(0, 3, 'ok', 234),
      trial(1, 4, 'ok', 277.4),
      trial(2, 10, 'failed', null, { verdict: { ...oom, evidence: [], ruledOut: [], remediation: [] } }),
      trial(3, 5, 'discarded', null),
    ];
    const c: CampaignResult = {
      campaignId: 7,
      status: 'done',
      best: trials[1],
      baseline: trials[0],
      trials,
      deployed: null,
      restarts: 4,
      winnerNote: null,
      bestPerConcurrency: [],
      summary: '',
      objectiveUnit: 'tok/s per request',
    };
    expect(formatChatSummary(c).split('\n')).toEqual([
      'campaign 7 (spectune): winner speculative_num_steps=4 277.4 tok/s per request (+18.5 % vs baseline); baseline speculative_num_steps=3 234.0 tok/s per request',
      "4 trials (2 measured, 1 failed, 0 refused, 1 skipped), 4 restarts (spectune's deploys, rollbacks and final deploy; systemd's own restarts not counted), 3m50s",
      'failures: trial 3 speculative_num_steps=10: crash_loop/kv_cache_oom',
    ]);
  });
});
