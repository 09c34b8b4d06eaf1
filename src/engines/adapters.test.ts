import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isToolError } from '../errors.js';
import { detectEngine } from './locate.js';
import { ANY_ENGINE_ENDPOINTS, DEFAULT_PORTS, ENGINE_NAMES, getEngine, getEngineEndpoints } from './registry.js';
import { llamacpp, parseTimingLines } from './llamacpp/index.js';
import { sglang } from './sglang/index.js';
import { vllm } from './vllm/index.js';

const SG = ['python', '-m', 'sglang.launch_server', '--model-path', 'm'];
const VL = ['vllm', 'serve', 'org/model'];
const LL = ['llama-server', '-m', 't.gguf'];

// Error code of a call that should throw.
function codeOf(fn: () => unknown): string | null {
  try {
    fn();
  } catch (e) {
    return isToolError(e) ? e.code : 'not-a-ToolError';
  }
  return null;
}

describe('registry', () => {
  it('lists exactly the engine folders and detects them from argv, including the simulator and shell wrappers', () => {
    const folders = readdirSync(import.meta.dirname, { withFileTypes: true })
      .filter((d) => d.isDirectory() && existsSync(join(import.meta.dirname, d.name, 'index.ts')))
      .map((d) => d.name);
    expect([...ENGINE_NAMES].sort()).toEqual(folders.sort());
    expect(ENGINE_NAMES.slice(0, 3)).toEqual(['sglang', 'vllm', 'llamacpp']);
    expect(detectEngine(['node', '/opt/spectune/bin/spectune.js', 'sim', '--port', '1'])).toBe('sglang');
    expect(detectEngine(['sglang', 'serve', '--model-path', 'x'])).toBe('sglang');
    expect(detectEngine(['/usr/bin/python3.11', '-m', 'vllm.entrypoints.openai.api_server'])).toBe('vllm');
    expect(detectEngine(['/bin/sh', '-c', 'cd /x && exec /opt/llama-server -m a'])).toBe('llamacpp');
    expect(detectEngine(['/usr/local/bin/run.sh'])).toBeNull();
    expect(codeOf(() => getEngine('tgi'))).toBe('E_USAGE');
  });
});

describe('registry-derived data', () => {
  it('takes default ports, endpoints and version probes from each adapter', () => {
    expect(Object.keys(DEFAULT_PORTS)).toEqual(ENGINE_NAMES);
    expect(DEFAULT_PORTS).toMatchObject({ sglang: 30000, vllm: 8000, llamacpp: 8080 });
    expect(getEngineEndpoints('sglang')).toEqual({
      metricsPath: '/metrics',
      infoPaths: ['/server_info', '/get_server_info'],
    });
    expect(getEngineEndpoints('vllm').infoPaths).toEqual([]);
    expect(ANY_ENGINE_ENDPOINTS).toEqual({ metricsPath: '/metrics', infoPaths: ['/server_info', '/get_server_info'] });
    expect(getEngine('llamacpp').versionProbes).toEqual([{ path: '/props', field: 'build_info' }]);
    expect(Object.fromEntries(ENGINE_NAMES.map((n) => [n, getEngine(n).maxRequestsKey]))).toMatchObject({
      sglang: 'max_running_requests',
      vllm: 'max_num_seqs',
      llamacpp: 'parallel',
    });
    for (const n of ENGINE_NAMES) expect(getEngine(n).params.some((p) => p.key === getEngine(n).modelKey)).toBe(true);
  });

  it("reads capacity from SGLang's /server_info only", () => {
    expect(sglang.readInfoCapacity({ max_total_num_tokens: 10, context_length: 5 })).toEqual({
      maxTotalNumTokens: 10,
      maxRunningRequests: undefined,
      contextLen: 5,
    });
    expect(sglang.readInfoCapacity(null)).toBeNull();
    expect(vllm.readInfoCapacity({ max_total_num_tokens: 10 })).toBeNull();
  });
});

describe('sglang', () => {
  it('applies topk 1 => draft tokens = steps + 1, keeps the tree budget for topk > 1', () => {
    const s = sglang.readSettings([
      ...SG,
      '--speculative-algo',
      'EAGLE',
      '--speculative-num-steps',
      '3',
      '--speculative-eagle-topk',
      '1',
      '--speculative-num-draft-tokens',
      '8',
    ]);
    expect(s.speculative_algorithm).toBe('EAGLE');
    expect(sglang.effectiveSettings(s)).toMatchObject({ speculative_num_draft_tokens: 4, speculative_enabled: true });
    expect(sglang.effectiveSettings({ ...s, speculative_eagle_topk: 4 }).speculative_num_draft_tokens).toBe(8);
  });

  it('flags the bare AssertionError of a partial steps/topk/draft triple', () => {
    const problems = sglang.validateArgv([...SG, '--speculative-algorithm', 'EAGLE', '--speculative-eagle-topk', '2']);
    expect(problems.map((p) => p.severity)).toContain('error');
  });

  it('refuses out-of-range values and unknown keys', () => {
    expect(codeOf(() => sglang.patchArgv(SG, { mem_fraction_static: 1.5 }))).toBe('E_ENGINE_FLAG');
    expect(codeOf(() => sglang.patchArgv(SG, { speculative_num_steps: 2.5 }))).toBe('E_ENGINE_FLAG');
    expect(codeOf(() => sglang.patchArgv(SG, { no_such_knob: 1 }))).toBe('E_ENGINE_FLAG');
  });

  it('parses the capacity line (with and without optional fields)', () => {
    expect(
      sglang.parseCapacity(
        'max_total_num_tokens=20480, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=128, context_len=32768, available_gpu_mem=76.95 GB',
      ),
    ).toEqual({ maxTotalNumTokens: 20480, maxRunningRequests: 128, contextLen: 32768, availableGpuMemGb: 76.95 });
    expect(
      sglang.parseCapacity('max_total_num_tokens=100, max_prefill_tokens=16384, max_running_requests=2, context_len=64')
        ?.maxRunningRequests,
    ).toBe(2);
    expect(sglang.parseCapacity('Decode batch. #running-req: 1')).toBeNull();
  });

  it('normalises /metrics and /server_info (lifetime accept length preferred)', () => {
    const prom = [
      '# HELP sglang:num_running_reqs x',
      'sglang:num_running_reqs{tp_rank="0"} 3',
      'sglang:num_queue_reqs{tp_rank="0"} 1',
      'sglang:token_usage{tp_rank="0"} 0.25',
      'sglang:gen_throughput{tp_rank="0"} 120.5',
      'sglang:spec_accept_length{tp_rank="0"} 2.1',
    ].join('\n');
    const m = sglang.parseMetrics(prom, {
      max_running_requests: 48,
      internal_states: [{ avg_spec_accept_length: 2.75 }],
    });
    expect(m).toMatchObject({
      acceptLength: 2.75,
      runningRequests: 3,
      queuedRequests: 1,
      kvUsage: 0.25,
      genThroughput: 120.5,
      maxRunningRequests: 48,
    });
    expect(sglang.parseMetrics(prom, null).acceptLength).toBe(2.1);
    expect(sglang.readyPattern.test('[2026] The server is fired up and ready to roll!')).toBe(true);
    expect(sglang.readyPattern.test('INFO:     Application startup complete.')).toBe(false);
  });
});

describe('vllm', () => {
  it('patches num_speculative_tokens inside the JSON, keeping its formatting and other keys', () => {
    const argv = [...VL, '--speculative-config', '{"method": "eagle3", "model": "/d", "num_speculative_tokens":3}'];
    expect(vllm.patchArgv(argv, { num_speculative_tokens: 5 })[4]).toBe(
      '{"method": "eagle3", "model": "/d", "num_speculative_tokens":5}',
    );
    expect(vllm.patchArgv(argv, { speculative_model: null })[4]).toBe(
      '{"method": "eagle3", "num_speculative_tokens":3}',
    );
    const inline = ['vllm', 'serve', 'm', '--speculative-config={"method":"mtp","num_speculative_tokens":${SPEC:-5}}'];
    expect(vllm.readSettings(inline).num_speculative_tokens).toBe('${SPEC:-5}');
    expect(vllm.patchArgv(inline, { num_speculative_tokens: 2 })[3]).toBe(
      '--speculative-config={"method":"mtp","num_speculative_tokens":2}',
    );
  });

  it('patches the dotted form in place instead of adding a conflicting JSON flag', () => {
    const argv = [...VL, '--speculative-config.method', 'mtp', '--speculative-config.num_speculative_tokens', '1'];
    expect(vllm.patchArgv(argv, { num_speculative_tokens: 3 })).toEqual([
      ...VL,
      '--speculative-config.method',
      'mtp',
      '--speculative-config.num_speculative_tokens',
      '3',
    ]);
    expect(vllm.patchArgv(argv, { speculative_model: '/d' }).slice(-2)).toEqual(['--speculative-config.model', '/d']);
  });

  it('adds a JSON --speculative-config when none exists, and reads underscore flags', () => {
    const out = vllm.patchArgv([...VL, '--max_num_seqs', '8'], {
      speculative_method: 'ngram',
      num_speculative_tokens: 4,
      max_num_seqs: 16,
    });
    expect(out).toEqual([
      ...VL,
      '--max_num_seqs',
      '16',
      '--speculative-config',
      '{"method":"ngram","num_speculative_tokens":4}',
    ]);
    expect(vllm.effectiveSettings(vllm.readSettings(out))).toMatchObject({
      speculative_enabled: true,
      model: 'org/model',
      max_num_seqs: 16,
    });
  });

  it('reports removed legacy flags naming --speculative-config, and broken JSON', () => {
    const problems = vllm.validateArgv([
      ...VL,
      '--speculative_model',
      'd',
      '--num-speculative-tokens',
      '4',
      '--speculative-config',
      '{bad',
    ]);
    expect(problems.filter((p) => p.severity === 'error').map((p) => p.replacement ?? p.flag)).toEqual([
      '--speculative-config',
      '--speculative-config',
      '--speculative-config',
    ]);
  });

  it('parses capacity lines and spec-decode counters into acceptance length and rate', () => {
    expect(vllm.parseCapacity('INFO [kv_cache_utils.py:1087] GPU KV cache size: 49,152 tokens')).toEqual({
      maxTotalNumTokens: 49152,
    });
    expect(vllm.parseCapacity('Maximum concurrency for 32,768 tokens per request: 1.50x')).toEqual({
      contextLen: 32768,
      maxConcurrency: 1.5,
    });
    expect(vllm.parseCapacity('# GPU blocks: 2048, # CPU blocks: 512')).toEqual({ gpuBlocks: 2048 });
    const prom = [
      'vllm:spec_decode_num_drafts_total{engine="0",model_name="m"} 100',
      'vllm:spec_decode_num_draft_tokens_total{engine="0",model_name="m"} 300',
      'vllm:spec_decode_num_accepted_tokens_total{engine="0",model_name="m"} 150',
      'vllm:num_requests_running{engine="0"} 2',
      'vllm:num_requests_waiting{engine="0"} 0',
      'vllm:kv_cache_usage_perc{engine="0"} 0.4',
    ].join('\n');
    expect(vllm.parseMetrics(prom, null)).toMatchObject({
      acceptLength: 2.5,
      acceptRate: 0.5,
      runningRequests: 2,
      queuedRequests: 0,
      kvUsage: 0.4,
    });
    expect(vllm.readyPattern.test('INFO:     Application startup complete.')).toBe(true);
  });
});

describe('llamacpp', () => {
  it('-md alone does not enable speculation; a draft type does, with the default n-max', () => {
    const s = llamacpp.readSettings([...LL, '-md', 'd.gguf', '--spec-draft-n-max', '8']);
    expect(llamacpp.effectiveSettings(s)).toMatchObject({ speculative_enabled: false, model_draft: 'd.gguf' });
    expect(llamacpp.effectiveSettings(s).spec_draft_n_max).toBeUndefined();
    expect(
      llamacpp
        .validateArgv([...LL, '-md', 'd.gguf'])
        .map((p) => p.message)
        .join(),
    ).toMatch(/does NOT enable/);
    expect(
      llamacpp.effectiveSettings(llamacpp.readSettings([...LL, '-md', 'd', '--spec-type', 'draft-simple'])),
    ).toMatchObject({ speculative_enabled: true, spec_draft_n_max: 3 });
  });

  it('names the replacement of removed flags', () => {
    const problems = llamacpp.validateArgv([...LL, '--draft-max', '8', '--draft-min=1', '--draft', '4']);
    expect(problems.map((p) => [p.severity, p.flag, p.replacement])).toEqual([
      ['error', '--draft-max', '--spec-draft-n-max'],
      ['error', '--draft-min', '--spec-draft-n-min'],
      ['error', '--draft', '--spec-draft-n-max'],
    ]);
  });

  it('patches short and long spellings in place and adds --spec-draft-n-max when missing', () => {
    expect(llamacpp.patchArgv([...LL, '-c', '4096', '-np', '2'], { ctx_size: 8192, parallel: null })).toEqual([
      ...LL,
      '-c',
      '8192',
    ]);
    expect(llamacpp.patchArgv(LL, { spec_type: 'draft-simple', spec_draft_n_max: 16 })).toEqual([
      ...LL,
      '--spec-type',
      'draft-simple',
      '--spec-draft-n-max',
      '16',
    ]);
    expect(codeOf(() => llamacpp.patchArgv(LL, { spec_draft_n_max: -1 }))).toBe('E_ENGINE_FLAG');
  });

  it('reads timings from the completion JSON and from print_timing lines (both versions)', () => {
    expect(llamacpp.parseMetrics(null, { timings: { draft_n: 200, draft_n_accepted: 150 } }).acceptRate).toBe(0.75);
    const log = [
      'I slot print_timing: id  0 | task 0 | prompt eval time =     117.92 ms /    31 tokens (    3.80 ms per token,   262.89 tokens per second)',
      'I slot print_timing: id  0 | task 0 |        eval time =    2382.24 ms /   256 tokens (    9.34 ms per token,   107.04 tokens per second)',
      'I slot print_timing: id  0 | task 0 | draft acceptance = 1.00000 (  226 accepted /   226 generated), mean len =  8.79',
    ].join('\n');
    expect(parseTimingLines(log)).toEqual({
      acceptRate: 1,
      accepted: 226,
      drafted: 226,
      meanLen: 8.79,
      decodeTokPerSec: 107.04,
    });
    expect(parseTimingLines('draft acceptance rate = 0.50000 (   10 accepted /    20 generated)').acceptRate).toBe(0.5);
    expect(llamacpp.parseMetrics('llamacpp:requests_processing 1\nllamacpp:requests_deferred 2', log)).toMatchObject({
      acceptLength: 8.79,
      runningRequests: 1,
      queuedRequests: 2,
    });
  });

  it('is ready on "listening on http://", not on the pre-load HTTP line', () => {
    expect(llamacpp.readyPattern.test('0.00.417503 I srv  llama_server: listening on http://127.0.0.1:18080')).toBe(
      true,
    );
    expect(
      llamacpp.readyPattern.test('main: server is listening on http://0.0.0.0:8080 - starting the main loop'),
    ).toBe(true);
    expect(llamacpp.readyPattern.test('main: HTTP server is listening, hostname: 127.0.0.1, port: 8080')).toBe(false);
    expect(
      llamacpp.parseCapacity("load_model: initializing, n_slots = 1, n_ctx_slot = 4096, kv_unified = 'false'"),
    ).toEqual({ maxRunningRequests: 1, contextLen: 4096 });
  });
});
