import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { validateConfig } from './validate.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const minimal = () => ({
  target: { engine: 'sglang', endpoint: 'http://127.0.0.1:30000', hosts: [{ unit: 'sglang.service' }] },
  space: { speculative_num_steps: { min: 1, max: 10 } },
});

describe('validateConfig', () => {
  it('accepts a minimal config and fills defaults', () => {
    const r = validateConfig(minimal());
    expect(r.errors).toEqual([]);
    expect(r.ok).toBe(true);
    const c = r.config!;
    expect(c.space).toEqual([{ key: 'speculative_num_steps', values: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] }]);
    expect(c.search).toMatchObject({
      strategy: 'adaptive',
      noiseMargin: 0.03,
      repeats: 2,
      soak: { repeats: 1, durationMs: null },
    });
    expect(c.objective).toEqual({ metric: 'decodeTokensPerSec.p50', concurrency: 1, goal: 'maximize' });
    expect(c.target.hosts).toEqual([{ host: null, unit: 'sglang.service', role: 'rank0' }]);
    expect(c.store).toBe('./spectune.db');
    expect(c.benchmark.timeouts.readyMs).toBe(20 * 60_000);
  });

  it('accepts the shipped examples', () => {
    for (const f of ['examples/spectune.yaml', 'examples/demo.yaml']) {
      const r = validateConfig(parse(readFileSync(root + f, 'utf8')));
      expect(r.errors, f).toEqual([]);
      expect(r.ok, f).toBe(true);
    }
    const seed = validateConfig(parse(readFileSync(root + 'examples/spectune.yaml', 'utf8'))).config!;
    expect(seed.target.hosts.map((h) => h.role)).toEqual(['rank0', 'rank1']);
    expect(seed.constraints[0]).toEqual({
      metric: 'outputTokensPerSec',
      concurrency: 16,
      op: '>=',
      value: 0.9,
      relative: true,
    });
    expect(seed.budget.hours).toBe(4);
    expect(seed.target.gpuMemoryBytes).toBe(96 * 2 ** 30);
  });

  it('reports wrong types as `path: expected ..., got ...` with an example', () => {
    const cfg = minimal() as Record<string, unknown>;
    cfg.target = { ...(cfg.target as object), engine: 'tgi' };
    cfg.search = { noiseMargin: true };
    const r = validateConfig(cfg);
    expect(r.ok).toBe(false);
    expect(r.errors).toContainEqual(
      expect.stringMatching(
        /^target\.engine: expected one of "sglang", "vllm", "llamacpp", got "tgi" \(example: engine: sglang\)$/,
      ),
    );
    expect(r.errors.some((e) => e.startsWith('search.noiseMargin: expected') && e.includes('got true'))).toBe(true);
  });

  it('says "a list (YAML array)" where a list is expected, and shows the right form', () => {
    const cfg = minimal() as Record<string, unknown>;
    cfg.target = { ...(cfg.target as object), hosts: { unit: 'sglang.service' } };
    const r = validateConfig(cfg);
    expect(r.errors).toContainEqual(
      'target.hosts: expected a list (YAML array), got {"unit":"sglang.service"} (example: hosts: [{host: root@10.0.0.5, unit: sglang.service, role: rank0}])',
    );
  });

  it('suggests the nearest known key for a nested typo, and none when nothing is close', () => {
    const cfg = minimal() as Record<string, unknown>;
    cfg.target = {
      engine: 'sglang',
      endpoint: 'http://127.0.0.1:30000',
      hosts: [{ untt: 'sglang.service', unit: 'a.service' }],
    };
    cfg.budget = { trails: 5, zzzzzzzz: 1 };
    const r = validateConfig(cfg);
    expect(r.errors).toContain('target.hosts.0.untt: unknown key (did you mean unit?)');
    expect(r.errors).toContain('budget.trails: unknown key (did you mean trials?)');
    expect(r.errors).toContain('budget.zzzzzzzz: unknown key (check the spelling)');
  });

  it('names unknown keys and migrates renamed ones with a message', () => {
    const cfg = { ...minimal(), search: { margin: 0.05 }, budget: { maxTrials: 7 }, tagets: {} };
    const r = validateConfig(cfg);
    expect(r.errors).toEqual(['tagets: unknown key (did you mean target?)']);
    const { tagets: _t, ...ok } = cfg;
    const r2 = validateConfig(ok);
    expect(r2.ok).toBe(true);
    expect(r2.config!.search.noiseMargin).toBe(0.05);
    expect(r2.config!.budget.trials).toBe(7);
    expect(r2.warnings).toContain(
      'search.margin: renamed to search.noiseMargin in spectune 0.1; rename the key (value moved for now)',
    );
  });

  it('normalises units and percentages', () => {
    const cfg = {
      ...minimal(),
      search: { noiseMargin: '2.5%', soak: { repeats: 2, duration: '10m' } },
      budget: { trials: 5, hours: '90m' },
      constraints: [{ metric: 'ttftMs.p99', op: '<=', value: 2000 }],
    };
    const c = validateConfig(cfg).config!;
    expect(c.search.noiseMargin).toBeCloseTo(0.025);
    expect(c.search.soak.durationMs).toBe(600_000);
    expect(c.budget.hours).toBe(1.5);
    expect(c.constraints[0]).toEqual({ metric: 'ttftMs.p99', concurrency: 1, op: '<=', value: 2000, relative: false });
  });

  it('rejects unreadable units with the path', () => {
    const r = validateConfig({ ...minimal(), budget: { hours: 'two days' } });
    expect(r.errors).toEqual(['budget.hours: expected a duration such as "90s", "15m" or "2h", got "two days"']);
  });

  it('applies cross-field rules', () => {
    const cfg = {
      ...minimal(),
      target: { engine: 'sglang', endpoint: 'http://h:1', manager: 'process', hosts: [{ host: 'root@h', unit: 'u' }] },
      objective: { metric: 'decodeTokensPerSec.p50', concurrency: 4 },
    };
    const r = validateConfig(cfg);
    expect(r.errors).toContain(
      'objective.concurrency: expected one of the benchmark levels [1, 16], got 4 (add it to benchmark.concurrency)',
    );
    expect(r.errors.some((e) => e.startsWith('target.manager: expected systemd for remote hosts'))).toBe(true);
  });

  it('checks space keys against the engine parameter table when given', () => {
    const params = {
      sglang: [
        {
          key: 'speculative_num_steps',
          flag: '--speculative-num-steps',
          type: 'int' as const,
          min: 1,
          max: 8,
          description: '',
        },
      ],
    };
    const r = validateConfig({ ...minimal(), space: { speculative_num_step: { values: [1] } } }, { params });
    expect(r.errors).toEqual([
      'space.speculative_num_step: expected a sglang setting, got an unknown key (did you mean speculative_num_steps?)',
    ]);
    const r2 = validateConfig(minimal(), { params });
    expect(r2.errors).toEqual(['space.speculative_num_steps: expected values within 1..8, got 9, 10']);
  });

  it('reads flag-style setting names as canonical keys, with a warning', () => {
    const r = validateConfig({ ...minimal(), space: { '--speculative-num-steps': { values: [1, 2] } } });
    expect(r.config!.space).toEqual([{ key: 'speculative_num_steps', values: [1, 2] }]);
    const twice = validateConfig({
      ...minimal(),
      space: { 'speculative-num-steps': { values: [1] }, speculative_num_steps: { values: [2] } },
    });
    expect(twice.errors).toEqual([
      'space.speculative_num_steps: expected each setting once, got it under two spellings',
    ]);
    expect(r.warnings).toContain(
      'space.--speculative-num-steps: read as speculative_num_steps (settings are named in snake_case, e.g. speculative_num_steps)',
    );
  });

  it('warns about literal API keys and defaults latency objectives to minimize', () => {
    const cfg = { ...minimal(), objective: { metric: 'ttftMs.p99' } } as Record<string, unknown>;
    cfg.target = { ...(cfg.target as object), apiKey: 'sk-abc' };
    const r = validateConfig(cfg);
    expect(r.config!.objective.goal).toBe('minimize');
    expect(r.warnings.some((w) => w.startsWith('target.apiKey'))).toBe(true);
  });
});
