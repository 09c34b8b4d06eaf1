import { describe, expect, it } from 'vitest';
import { validateConfig, type SpectuneConfig } from '../config/index.js';
import { benchOptionsForPhase, benchOptionsFromConfig } from './tune-bench.js';
import { buildDemoConfig } from './demo-config.js';
import { toProposal } from './tune-search.js';
import { listOpeningProposals } from './tune-dry-run.js';
import { pickConfig } from './tune-service.js';

// The demo's validated config, as a realistic input.
function demoConfig(): SpectuneConfig {
  const v = validateConfig(buildDemoConfig(31999, './d.db'));
  if (!v.ok) throw new Error(v.errors.join('; '));
  return v.config;
}

describe('tune bindings', () => {
  it('benchmark phases: a short warm-up, the profile, a longer soak', () => {
    const cfg = demoConfig();
    const base = benchOptionsFromConfig(cfg, 'sk-secret');
    expect(base).toMatchObject({
      url: 'http://127.0.0.1:31999',
      concurrency: [1, 4],
      requests: 4,
      outputTokens: 160,
      apiKey: 'sk-secret',
    });
    expect(benchOptionsForPhase(base, cfg, 'warmup')).toMatchObject({ concurrency: [1], warmup: 0, requests: 1 });
    expect(base.warmup).toBe(0);
    expect(benchOptionsForPhase(base, cfg, 'bench')).toBe(base);
    expect(
      benchOptionsForPhase(base, { ...cfg, search: { ...cfg.search, soak: { repeats: 3, durationMs: null } } }, 'soak')
        .requests,
    ).toBe(12);
    expect(
      benchOptionsForPhase(
        base,
        { ...cfg, search: { ...cfg.search, soak: { repeats: 1, durationMs: 60_000 } } },
        'soak',
      ),
    ).toMatchObject({ requests: null, durationSec: 60 });
  });

  it('maps the search answer to a proposal, done to null', () => {
    expect(
      toProposal({
        done: false,
        params: { speculative_num_steps: 4 },
        reason: 'x',
        purpose: 'climb',
        confirmProbe: false,
      }),
    ).toEqual({ config: { speculative_num_steps: 4 }, reason: 'climb: x', confirmProbe: false });
    expect(toProposal({ done: true, reason: 'converged', best: null })).toBeNull();
  });

  it('dry run lists the opening climb', () => {
    const search = {
      propose: (h: { config: Record<string, unknown> }[]) =>
        h.length < 3 ? { config: { s: h.length + 1 }, reason: `step ${h.length}` } : null,
      predict: () => null,
    };
    const out = listOpeningProposals(search as never, { s: 1 });
    expect(out.map((p) => p.config)).toEqual([{ s: 2 }, { s: 3 }]);
  });

  it('picks only the tuned keys from the settings in force', () => {
    expect(
      pickConfig({ speculative_num_steps: 3, tp_size: 2, weird: {} }, ['speculative_num_steps', 'cuda_graph_max_bs']),
    ).toEqual({ speculative_num_steps: 3 });
  });
});
