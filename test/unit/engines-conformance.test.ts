// One conformance test over every engine of the registry (no engine is named here): its real launch configs read,
// get init's proposal (valid under the config validator) and take a patch of the proposed knob; its metrics fixture
// reads through the adapter and the bench; every diagnosis rule tagged with it has a fixture of its own dialect.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { summarizeEngineView } from '../../src/bench/prometheus.js';
import { validateConfig } from '../../src/config/index.js';
import { ALL_RULES, parseLine } from '../../src/diagnose/index.js';
import { stripAppPrefix } from '../../src/diagnose/prefix.js';
import {
  detectEngine,
  ENGINE_NAMES,
  getEngine,
  parsePrometheus,
  patchExecStart,
  readExecStart,
  type EngineName,
  type ParamValue,
} from '../../src/engines/index.js';
import { describeUnitFiles, proposeConfig, type EngineUnit } from '../../src/onboard/index.js';
import { loadLaunchConfigs } from './engines-launch-configs.helpers.js';

const FIXTURES = join(import.meta.dirname, '../fixtures');
const JOURNAL = join(FIXTURES, 'journal');
const CORPUS = join(import.meta.dirname, '../corpus/real');
const JOURNAL_FORMS = ['journal.txt', 'journal.jsonl', 'engine.log', 'log.txt'];
const CONFIGS = loadLaunchConfigs();
const PARAMS = Object.fromEntries(ENGINE_NAMES.map((n) => [n, getEngine(n).params]));

// The unit as init reads it from `systemctl cat` (one file, no drop-ins), or null for a wrapper.
function readUnit(id: string, text: string): EngineUnit | null {
  return describeUnitFiles(`${id}.service`, [{ path: `/etc/systemd/system/${id}.service`, text }]);
}

// The lines of every journal fixture and real-corpus case filed under one engine.
function engineLogLines(engine: EngineName): string[] {
  const dirs = [JOURNAL, CORPUS]
    .map((root) => join(root, engine))
    .filter(existsSync)
    .flatMap((root) =>
      readdirSync(root, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .map((d) => join(root, d.name)),
    );
  return dirs.flatMap((d) =>
    JOURNAL_FORMS.filter((f) => existsSync(join(d, f))).flatMap((f) => readFileSync(join(d, f), 'utf8').split('\n')),
  );
}

// A value init proposes for a dimension that differs from the setting in force when it can.
function proposedValue(values: ParamValue[], current: ParamValue | undefined): ParamValue {
  return [...values].reverse().find((v) => v !== current) ?? values[0];
}

describe.each(ENGINE_NAMES.map((n) => [n] as const))('engine %s', (name) => {
  const adapter = getEngine(name);
  const configs = CONFIGS.filter((c) => c.engine === name);
  const units = configs
    .filter((c) => c.kind === 'systemd')
    .map((c) => ({ c, u: readUnit(c.id, c.text) }))
    .filter((x): x is { c: typeof x.c; u: EngineUnit } => x.u !== null);

  it('is one folder whose adapter names itself', () => {
    expect(existsSync(join(import.meta.dirname, '../../src/engines', name, 'index.ts'))).toBe(true);
    expect(adapter.name).toBe(name);
    expect(adapter.displayName).not.toBe('');
    expect(adapter.invocations.length).toBeGreaterThan(0);
  });

  it('has real launch configs, and init recognises its systemd units', () => {
    expect(configs.length).toBeGreaterThan(0);
    expect(units.length).toBeGreaterThan(0);
    for (const { c, u } of units) {
      expect(u.engine, c.id).toBe(name);
      expect(detectEngine(readExecStart(c.text, {}, { engine: name }).argv), c.id).toBe(name);
    }
  });

  it("proposes a valid config whose space the adapter patches into each unit's command", () => {
    for (const { c, u } of units) {
      const p = proposeConfig({
        host: 'root@gpu1',
        endpointHost: '10.0.0.5',
        unit: u,
        startup: null,
        timeoutStopMs: 90_000,
        others: [],
        generatedAt: '2026-12-01T15:00:00Z',
      });
      const v = validateConfig(parseYaml(p.yaml), { params: PARAMS });
      expect(v.errors, `${c.id}:\n${p.yaml}`).toEqual([]);
      expect(v.config!.target.engine).toBe(name);
      expect(p.space.length, c.id).toBeGreaterThan(0);
      expect(
        p.space.filter((k) => !adapter.params.some((s) => s.key === k)),
        c.id,
      ).toEqual([]);
      const dim = v.config!.space[0];
      const value = proposedValue(dim.values, u.settings[dim.key]);
      const before = readExecStart(c.text, {}, { engine: name });
      const patched = patchExecStart(c.text, name, { [dim.key]: value });
      const again = readExecStart(patched.execStart, {}, { engine: name });
      expect(again.settings[dim.key], `${c.id}: ${dim.key}`).toBe(value);
      for (const [k, old] of Object.entries(before.settings))
        if (k !== dim.key) expect(again.settings[k], `${c.id}: ${k} kept`).toEqual(old);
    }
  });

  it('reads its metrics fixture through the adapter and the bench, every declared metric name included', () => {
    const dir = join(FIXTURES, 'metrics', name);
    const text = readFileSync(join(dir, 'metrics.prom'), 'utf8');
    const expected = JSON.parse(readFileSync(join(dir, 'expected.json'), 'utf8')) as {
      engine: Record<string, unknown>;
      view: Record<string, number>;
    };
    expect(adapter.parseMetrics(text, null)).toMatchObject(expected.engine);
    const view = summarizeEngineView(parsePrometheus(text), null);
    const declared = Object.keys(adapter.metricNames);
    expect(declared.length).toBeGreaterThan(0);
    expect(Object.keys(expected.view).sort()).toEqual([...declared].sort());
    for (const figure of declared) expect(view[figure], figure).toBe(expected.view[figure]);
    const exported = new Set(parsePrometheus(text).map((s) => s.name));
    for (const [figure, names] of Object.entries(adapter.metricNames))
      expect(
        names!.some((n) => exported.has(n)),
        figure,
      ).toBe(true);
  });

  it('has a fixture line of its own dialect for every diagnosis rule tagged with it', () => {
    const lines = engineLogLines(name);
    expect(lines.length).toBeGreaterThan(0);
    expect(
      lines.some((l) => stripAppPrefix(parseLine(l).message).dialect === name),
      'its log prefix is recognised in its fixtures',
    ).toBe(true);
    // A rule of this engine alone needs a fixture of this engine; a rule shared by several engines (NCCL, argparse,
    // uvicorn) needs one of any engine it names, checked once, under the first engine it names.
    const own = ALL_RULES.filter((r) => r.engines?.length === 1 && r.engines[0] === name);
    expect(own.length).toBeGreaterThan(0);
    expect(own.filter((r) => !r.patterns.some((p) => lines.some((l) => p.test(l)))).map((r) => r.id)).toEqual([]);
    const shared = ALL_RULES.filter((r) => (r.engines?.length ?? 0) > 1 && r.engines![0] === name);
    const matchesAny = (r: (typeof shared)[number]) => {
      const ls = r.engines!.flatMap(engineLogLines);
      return r.patterns.some((p) => ls.some((l) => p.test(l)));
    };
    expect(shared.filter((r) => !matchesAny(r)).map((r) => r.id)).toEqual([]);
  });
});
