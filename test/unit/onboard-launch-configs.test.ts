// init on the 30 real launch configs: every systemd unit with a readable engine command is recognised with its
// model, port and speculative settings, compose services arrive as (non-tunable) docker candidates, and the config
// init proposes for each one loads with the real config validator (engine parameter tables included).
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/index.js';
import { ENGINE_NAMES, getEngine } from '../../src/engines/index.js';
import { describeUnitFiles, parseDockerPs, proposeConfig, type EngineUnit } from '../../src/onboard/index.js';
import { composeArgv, loadLaunchConfigs } from './engines-launch-configs.helpers.js';

const CONFIGS = loadLaunchConfigs();
const PARAMS = Object.fromEntries(ENGINE_NAMES.map((n) => [n, getEngine(n).params]));

// The unit as init reads it from `systemctl cat` (one file, no drop-ins).
function readUnit(id: string): EngineUnit | null {
  const c = CONFIGS.find((x) => x.id === id)!;
  return describeUnitFiles(`${id}.service`, [{ path: `/etc/systemd/system/${id}.service`, text: c.text }]);
}

// Propose a config for a unit and validate it as `spectune tune` would.
function proposeAndValidate(u: EngineUnit) {
  const p = proposeConfig({
    host: 'root@gpu1',
    endpointHost: '10.0.0.5',
    unit: u,
    startup: null,
    timeoutStopMs: 90_000,
    others: [],
    generatedAt: '2026-12-01T15:00:00Z',
  });
  return { p, v: validateConfig(parseYaml(p.yaml), { params: PARAMS }) };
}

describe('init reads the real systemd launch configs', () => {
  it('recognises engine, model, port and the speculative settings in force', () => {
    expect(readUnit('sd-vllm-rizkynindra')).toMatchObject({
      engine: 'vllm',
      model: 'zai-org/GLM-OCR',
      port: 8001,
      portIsDefault: false,
      speculativeEnabled: true,
      speculative: { speculative_method: 'mtp', num_speculative_tokens: 1 },
    });
    expect(readUnit('sd-sglang-tianyang')).toMatchObject({
      engine: 'sglang',
      model: 'Qwen/Qwen3-14B',
      port: 8000,
      speculativeEnabled: false,
      speculative: {},
    });
    expect(readUnit('sd-llamacpp-jakemaly')).toMatchObject({
      engine: 'llamacpp',
      port: 8080,
      speculativeEnabled: true,
      speculative: {
        spec_type: 'dflash',
        model_draft: '/home/hermes/llama/models/precision/dflash-draft-3.6-q4_k_m.gguf',
        spec_draft_ngl: 'all',
      },
    });
    // A port only known from a variable is not a fact: the engine default is used and said to be one.
    expect(readUnit('sd-llamacpp-chrisspen')).toMatchObject({
      engine: 'llamacpp',
      model: null,
      port: 8080,
      portIsDefault: true,
    });
    // -md without --spec-type: speculation is off, and the adapter's warning travels with the unit.
    const itenev = readUnit('sd-llamacpp-itenev')!;
    expect(itenev.speculativeEnabled).toBe(false);
    expect(itenev.warnings.join('\n')).toMatch(/does NOT enable speculative decoding/);
  });

  it('every readable systemd config gets a proposal that the config loader accepts', () => {
    const systemd = CONFIGS.filter((c) => c.kind === 'systemd');
    const read = systemd.map((c) => ({ id: c.id, u: readUnit(c.id) })).filter((x) => x.u !== null);
    // 4 call wrapper scripts or are templates whose flags live elsewhere: named, not guessed.
    expect(read.map((x) => x.id).sort()).toEqual(
      systemd
        .map((c) => c.id)
        .filter(
          (id) =>
            !['sd-vllm-ruashots', 'sd-vllm-sparkllm-template', 'sd-llamacpp-user12043', 'sd-llamacpp-hanxiao'].includes(
              id,
            ),
        )
        .sort(),
    );
    for (const { id, u } of read) {
      const { p, v } = proposeAndValidate(u!);
      expect(v.errors, `${id}:\n${p.yaml}`).toEqual([]);
      expect(v.ok).toBe(true);
      expect(v.config!.target.engine).toBe(u!.engine);
      expect(v.config!.target.endpoint).toBe(`http://10.0.0.5:${u!.port}`);
      expect(v.config!.target.hosts).toEqual([{ host: 'root@gpu1', unit: `${id}.service`, role: 'rank0' }]);
    }
  });

  it('proposes the speculative knob in force, around its current value', () => {
    const vllm = proposeAndValidate(readUnit('sd-vllm-rizkynindra')!);
    expect(vllm.p.space).toEqual(['num_speculative_tokens']);
    expect(vllm.v.config!.space[0].values).toEqual([1, 2, 3, 4, 5]);
    expect(vllm.p.yaml).toMatch(/# mtp speculation in force with num_speculative_tokens=1 \(the baseline\)/);
    const off = proposeAndValidate(readUnit('sd-sglang-tianyang')!);
    expect(off.p.space).toEqual(['cuda_graph_max_bs']);
    expect(off.p.yaml).toMatch(/speculative decoding is off in this unit/);
    // --max-running-requests 1: one level, and no throughput constraint at a level that does not exist.
    expect(off.v.config!.benchmark.concurrency).toEqual([1]);
    expect(off.v.config!.constraints.map((c) => c.metric)).toEqual(['ttftMs.p99']);
  });
});

describe('init lists compose services as docker candidates', () => {
  it('reads `docker ps` rows of the real compose configs', () => {
    const rows = CONFIGS.filter(
      (c) => c.kind === 'compose' && c.id !== 'co-sglang-liukunup' && c.id !== 'co-llamacpp-mousou',
    ).map((c) => {
      const { argv } = composeArgv(c.text, c.engine === 'llamacpp' ? ['/app/llama-server'] : []);
      return JSON.stringify({
        Names: c.id,
        Command: `"${argv.join(' ')}"`,
        Labels: `com.docker.compose.project=${c.id},com.docker.compose.service=main`,
      });
    });
    const units = parseDockerPs(['not json', ...rows].join('\n'));
    expect(units.map((u) => [u.unit, u.engine, u.source])).toEqual([
      ['co-llamacpp-hanxiao', 'llamacpp', 'docker'],
      ['co-sglang-niushuai', 'sglang', 'docker'],
      ['co-sglang-amasu', 'sglang', 'docker'],
      ['co-vllm-amasu', 'vllm', 'docker'],
    ]);
    expect(units[2].compose).toBe('co-sglang-amasu/main');
  });
});
