// Table-driven test over the 30 real launch configurations: read the settings in force, patch one flag, prove
// every other byte/token is unchanged and that re-reading gives the new value; wrappers say "wrapper".
import { describe, expect, it } from 'vitest';
import {
  findEngineCommand,
  getEngine,
  patchExecStart,
  patchShellCommand,
  readEnvSettings,
  readExecStart,
  readShellCommand,
  locateExecStart,
  resolveReferences,
  type EngineName,
  type EngineSettings,
  type ExecStartReading,
  type ParamValue,
} from '../../src/engines/index.js';
import { isToolError } from '../../src/errors.js';
import {
  composeArgv,
  k8sContainers,
  kustomizeAppendedArgs,
  loadLaunchConfigs,
  markdownCodeBlocks,
  type LaunchConfig,
} from './engines-launch-configs.helpers.js';

/** What we expect for one config: speculation in force, a few settings, or that it is a wrapper. */
interface Expectation {
  wrapper?: boolean;
  speculative: boolean;
  settings?: EngineSettings;
  warning?: RegExp;
}

// One patch per engine: the knob a tuner turns.
const PATCH: Record<EngineName, [string, ParamValue]> = {
  sglang: ['speculative_num_steps', 5],
  vllm: ['num_speculative_tokens', 4],
  llamacpp: ['spec_draft_n_max', 6],
};
// A string setting per engine for the hostile-value round trip.
const STRING_KEY: Record<EngineName, string> = {
  sglang: 'speculative_draft_model_path',
  vllm: 'kv_cache_dtype',
  llamacpp: 'model_draft',
};
const HOSTILE = `; rm -rf / $(id) \`id\` "dq" 'sq' %h \${HOME} \\`;

const EXPECT: Record<string, Expectation> = {
  'sd-vllm-rizkynindra': {
    speculative: true,
    settings: { speculative_method: 'mtp', num_speculative_tokens: 1, gpu_memory_utilization: 0.85 },
  },
  'sd-vllm-mirofish': { speculative: false, settings: { max_num_seqs: 16, gpu_memory_utilization: 0.85 } },
  'sd-vllm-ruashots': {
    wrapper: true,
    speculative: true,
    settings: { speculative_method: 'mtp', num_speculative_tokens: 3 },
  },
  'sd-vllm-sparkllm-template': { wrapper: true, speculative: false },
  'sd-sglang-tianyang': {
    speculative: false,
    settings: { tp_size: 2, mem_fraction_static: 0.65, max_running_requests: 1 },
  },
  'sd-sglang-darkmaniac7': { speculative: false, settings: { port: 30000 } },
  'sd-llamacpp-chrisspen': {
    speculative: false,
    settings: { ctx_size: '${CONTEXT_SIZE}' },
    warning: /ctx_size comes from \$\{CONTEXT_SIZE\}/,
  },
  // spec_state says "active", but --spec-draft-model without --spec-type does NOT enable speculation in llama-server.
  'sd-llamacpp-itenev': {
    speculative: false,
    settings: { spec_draft_n_max: '${DRAFT_TOKENS}' },
    warning: /without --spec-type does NOT enable/,
  },
  'sd-llamacpp-terr0q': {
    speculative: false,
    settings: { ctx_size: undefined as never },
    warning: /systemd ignores it/,
  },
  'sd-llamacpp-meas1': { speculative: false, settings: { ctx_size: 131072, threads: 6, parallel: 1 } },
  'sd-llamacpp-user12043': {
    speculative: false,
    settings: { ctx_size: '${CONTEXT_SIZE}' },
    warning: /is expanded and word-split/,
  },
  'sd-llamacpp-jakemaly': { speculative: true, settings: { spec_type: 'dflash', ctx_size: 131072 } },
  'sd-llamacpp-engineering87': {
    speculative: false,
    settings: { flash_attn: '--metrics' },
    warning: /--flash-attn "--metrics"/,
  },
  'sd-llamacpp-quadlet': { speculative: false, settings: { ctx_size: '-ngl', port: 8080 }, warning: /Quadlet/ },
  'sd-llamacpp-hanxiao': {
    wrapper: true,
    speculative: true,
    settings: { spec_type: 'draft-mtp', spec_draft_n_max: 2 },
  },
  'co-llamacpp-hanxiao': {
    speculative: true,
    settings: { spec_type: 'draft-mtp', spec_draft_n_max: 2, ubatch_size: 64 },
  },
  'co-sglang-niushuai': { speculative: true, settings: { speculative_num_steps: 3, speculative_num_draft_tokens: 4 } },
  'co-sglang-amasu': { speculative: false, settings: { mem_fraction_static: 0.7, chunked_prefill_size: 8192 } },
  'co-vllm-amasu': { speculative: true, settings: { speculative_method: 'mtp', num_speculative_tokens: 5 } },
  'co-sglang-liukunup': { speculative: false, settings: { port: 30000 } },
  'co-llamacpp-mousou': { speculative: false, settings: { ctx_size: 32768, threads: 8, port: 11435 } },
  'k8s-vllm-gcp-base': { speculative: false, settings: { gpu_memory_utilization: '$(GPU_MEMORY_UTILIZATION)' } },
  'k8s-vllm-gcp-eagle-patch': {
    speculative: true,
    settings: { speculative_method: 'eagle3', num_speculative_tokens: 3, max_num_seqs: 128 },
  },
  'k8s-sglang-bkauf': { speculative: false, settings: { tp_size: 1, context_length: 2048, port: 30000 } },
  'k8s-vllm-andrewaddo': { speculative: false, settings: { tensor_parallel_size: 4, max_model_len: 128000 } },
  'sh-sglang-mlcommons': { speculative: false, warning: /\$args is expanded/ },
  'sh-sglang-tutu329': { speculative: false, settings: { tp_size: 8, max_running_requests: 64 } },
  'sh-vllm-southfreebird': { speculative: false, settings: { tensor_parallel_size: 4 } },
  'sh-sglang-alexgs74': {
    speculative: false,
    settings: { chunked_prefill_size: 4096 },
    warning: /SPEC_ARGS\} is expanded/,
  },
  'sh-vllm-knu': { speculative: true, settings: { num_speculative_tokens: 16 }, warning: /was removed from vLLM/ },
};

/** A config reduced to something we can read and patch. */
type Source =
  | { kind: 'unit'; text: string }
  | { kind: 'script'; text: string }
  | { kind: 'argv'; argv: string[]; env: Record<string, string> };

// The k8s base the eagle overlay patches (kustomize build = base args + appended args).
function k8sBaseArgv(all: LaunchConfig[]): string[] {
  const base = all.find((c) => c.id === 'k8s-vllm-gcp-base')!;
  return k8sContainers(base.text).find((c) => c.name === 'inference-server')!.argv;
}

// Reduce one config to a readable source (systemd units through the product's unit reader).
function sourceOf(c: LaunchConfig, all: LaunchConfig[]): Source {
  if (c.kind === 'systemd') return { kind: 'unit', text: c.text };
  if (c.kind === 'shell')
    return { kind: 'script', text: c.format.includes('markdown') ? markdownCodeBlocks(c.text)[0] : c.text };
  if (c.kind === 'compose') {
    const { argv, environment } = composeArgv(c.text, c.engine === 'llamacpp' ? ['llama-server'] : []);
    return { kind: 'argv', argv, env: environment };
  }
  if (c.id === 'k8s-vllm-gcp-eagle-patch')
    return { kind: 'argv', argv: [...k8sBaseArgv(all), ...kustomizeAppendedArgs(c.text)], env: {} };
  const container = k8sContainers(c.text).find((x) => findEngineCommand(x.argv).kind !== 'wrapper')!;
  const loc = findEngineCommand(container.argv);
  if (loc.kind === 'shell') return { kind: 'script', text: container.argv[loc.scriptIndex] };
  return { kind: 'argv', argv: container.argv, env: {} };
}

// Read an argv source: compose ${VAR:-default} and env-only llama.cpp settings included.
function readArgv(
  argv: string[],
  env: Record<string, string>,
): { engine: EngineName; settings: EngineSettings; effective: EngineSettings; start: number } {
  const loc = findEngineCommand(argv);
  if (loc.kind !== 'direct') throw new Error(`no engine in ${argv.join(' ')}`);
  const adapter = getEngine(loc.engine);
  const settings = {
    ...readEnvSettings(loc.engine, env),
    ...adapter.readSettings(argv.slice(loc.start).map((a) => resolveReferences(a, {}))),
  };
  return { engine: loc.engine, settings, effective: adapter.effectiveSettings(settings), start: loc.start };
}

// Read any source the way the product would.
function readSource(src: Source, engine: EngineName): ExecStartReading | ReturnType<typeof readArgv> {
  if (src.kind === 'unit') return readExecStart(src.text, {}, { engine });
  if (src.kind === 'script') return readShellCommand(src.text, {}, { engine });
  return readArgv(src.argv, src.env);
}

// Prove a text patch touched one token only: a change inside one token, or one flag inserted with its blank.
function expectOneTokenChanged(before: string, after: string, key: string): void {
  let p = 0;
  while (p < before.length && before[p] === after[p]) p++;
  let s = 0;
  while (s < before.length - p && s < after.length - p && before[before.length - 1 - s] === after[after.length - 1 - s])
    s++;
  const oldMid = before.slice(p, before.length - s),
    newMid = after.slice(p, after.length - s);
  if (oldMid !== '') {
    expect(`${oldMid}|${newMid}`, `${key} replaced in place`).not.toMatch(/\s/);
    return;
  }
  const len = after.length - before.length;
  const inserts = [...Array(before.length + 1).keys()]
    .filter((i) => after.startsWith(before.slice(0, i)) && after.endsWith(before.slice(i)))
    .map((i) => after.slice(i, i + len));
  expect(
    inserts.some((x) => /^( |\s*\\\n\s*)--[a-z-]+ ([\w.]+|'\{"\w+":\d+\}')$/.test(x)),
    `${key} appended: ${inserts[0]}`,
  ).toBe(true);
}

const configs = loadLaunchConfigs();

describe('the 30 reference launch configurations', () => {
  it('covers all 30 with an expectation', () => {
    expect(configs.map((c) => c.id).sort()).toEqual(Object.keys(EXPECT).sort());
  });

  it.each(configs.map((c) => [c.id, c] as const))('%s: reads what is in force', (_id, c) => {
    const want = EXPECT[c.id];
    let reading = readSource(sourceOf(c, configs), c.engine);
    if (want.wrapper) {
      expect('location' in reading && reading.location?.kind).toBe('wrapper');
      expect('warnings' in reading && reading.warnings.join('\n')).toMatch(
        /wrapper script .*: flags cannot be read\/patched from the unit/,
      );
      if (!c.companion) return;
      reading = readShellCommand(c.companion.text);
    }
    expect(reading.effective.speculative_enabled, 'speculation in force').toBe(want.speculative);
    for (const [k, v] of Object.entries(want.settings ?? {})) expect(reading.settings[k], k).toEqual(v);
    if (want.warning) expect('warnings' in reading ? reading.warnings.join('\n') : '').toMatch(want.warning);
  });

  it.each(configs.filter((c) => !EXPECT[c.id].wrapper).map((c) => [c.id, c] as const))(
    '%s: patches one flag and nothing else',
    (_id, c) => {
      const src = sourceOf(c, configs);
      const [key, value] = PATCH[c.engine];
      if (src.kind === 'argv') {
        const { start } = readArgv(src.argv, src.env);
        const old = src.argv.slice(start);
        const patched = getEngine(c.engine).patchArgv(old, { [key]: value });
        const changedAt = patched.map((t, i) => (t === old[i] ? -1 : i)).filter((i) => i >= 0);
        expect(changedAt.length, 'tokens changed in place').toBeLessThanOrEqual(2);
        expect(
          patched.slice(0, old.length).filter((t, i) => t !== old[i]).length + Math.max(0, old.length - patched.length),
        ).toBeLessThanOrEqual(1);
        expect(readArgv([...src.argv.slice(0, start), ...patched], {}).settings[key]).toBe(value);
        return;
      }
      const patch =
        src.kind === 'unit'
          ? patchExecStart(src.text, c.engine, { [key]: value })
          : patchShellCommand(src.text, c.engine, { [key]: value });
      const before = src.kind === 'unit' ? readExecStart(src.text, {}, { engine: c.engine }) : null;
      const beforeText = src.kind === 'unit' ? locateExecStart(src.text)!.value : src.text;
      expectOneTokenChanged(beforeText, patch.execStart, key);
      const again =
        src.kind === 'unit'
          ? readExecStart(patch.execStart, {}, { engine: c.engine })
          : readShellCommand(patch.execStart, {}, { engine: c.engine });
      expect(again.settings[key]).toBe(value);
      if (before) expect(again.argv.length - before.argv.length).toBeGreaterThanOrEqual(0);
    },
  );

  it.each(configs.filter((c) => c.kind === 'systemd' && !EXPECT[c.id].wrapper).map((c) => [c.id, c] as const))(
    '%s: hostile values stay one literal argument',
    (_id, c) => {
      const key = STRING_KEY[c.engine];
      const patch = patchExecStart(c.text, c.engine, { [key]: HOSTILE });
      expect(readExecStart(patch.execStart, {}, { engine: c.engine }).settings[key]).toBe(HOSTILE);
      expect(() => patchExecStart(c.text, c.engine, { [key]: 'x\nExecStartPre=/bin/sh -c id' })).toThrow(
        /control character/,
      );
    },
  );

  it.each(configs.filter((c) => EXPECT[c.id].wrapper).map((c) => [c.id, c] as const))(
    '%s: refuses to patch through a wrapper',
    (_id, c) => {
      let err: unknown;
      try {
        patchExecStart(c.text, c.engine, { [PATCH[c.engine][0]]: PATCH[c.engine][1] });
      } catch (e) {
        err = e;
      }
      expect(isToolError(err) && `${err.code} ${err.message}`).toMatch(/^E_ENGINE_FLAG unit calls wrapper script/);
    },
  );
});
