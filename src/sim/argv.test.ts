import { describe, expect, it } from 'vitest';
import { parseSglangArgs, renderArgError } from './argv.js';
import { parseFaults, planLaunch, readTimeScale } from './options.js';
import { loadProfile } from './profiles-io.js';

describe('parseSglangArgs', () => {
  it('accepts --flag value, --flag=value, aliases, store_true and repeatable flags', () => {
    const r = parseSglangArgs([
      '--tp',
      '2',
      '--mem-fraction-static=0.85',
      '--disable-cuda-graph',
      '--sim-fault',
      'crash-after=3',
      '--sim-fault=hang-after=9',
      '--model',
      'm',
    ]);
    expect(r).toEqual({
      ok: true,
      args: {
        tp_size: 2,
        mem_fraction_static: 0.85,
        disable_cuda_graph: true,
        sim_fault: ['crash-after=3', 'hang-after=9'],
        model_path: 'm',
      },
    });
  });

  it('accepts unambiguous prefixes as argparse does and rejects ambiguous ones', () => {
    expect(parseSglangArgs(['--speculative-algo', 'EAGLE', '--disable-radix'])).toEqual({
      ok: true,
      args: { speculative_algorithm: 'EAGLE', disable_radix_cache: true },
    });
    const r = parseSglangArgs(['--speculative-draft', 'x']);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(
      /^ambiguous option: --speculative-draft could match --speculative-draft-model-path, --speculative-draft-model-revision$/,
    );
  });

  it.each([
    [['--bogus', '--also-bad=1'], 'unrecognized arguments: --bogus --also-bad=1'],
    [['--port', 'x'], "argument --port: invalid int value: 'x'"],
    [['--port'], 'argument --port: expected one argument'],
    [['--port', '--tp', '2'], 'argument --port: expected one argument'],
    [
      ['--speculative-algorithm', 'MEDUSA'],
      "argument --speculative-algorithm: invalid choice: 'MEDUSA' (choose from 'EAGLE', 'EAGLE3', 'NEXTN', 'STANDALONE', 'NGRAM')",
    ],
    [['--enable-metrics=yes'], "argument --enable-metrics: ignored explicit argument 'yes'"],
  ])('%j → %s', (argv, error) => {
    expect(parseSglangArgs(argv)).toEqual({ ok: false, error });
  });

  it('renders usage then `launch_server.py: error: ...`', () => {
    const text = renderArgError('unrecognized arguments: --x');
    expect(text.startsWith('usage: launch_server.py [-h] [--model-path MODEL_PATH]')).toBe(true);
    expect(text.endsWith('\nlaunch_server.py: error: unrecognized arguments: --x\n')).toBe(true);
  });
});

describe('planLaunch', () => {
  const profile = loadProfile();
  it('takes the time scale from the flag over the environment, rejecting non-positive values', () => {
    expect(readTimeScale({}, {})).toBe(1);
    expect(readTimeScale({}, { SPECTUNE_SIM_TIME_SCALE: '0.1' })).toBe(0.1);
    expect(readTimeScale({ sim_time_scale: 0.5 }, { SPECTUNE_SIM_TIME_SCALE: '0.1' })).toBe(0.5);
    expect(readTimeScale({}, { SPECTUNE_SIM_TIME_SCALE: '0' })).toEqual({ error: expect.stringContaining('positive') });
  });

  it('parses faults and rejects unknown kinds', () => {
    expect(parseFaults(['crash-after=2', 'cuda-oom-batch=8'])).toEqual({
      ok: true,
      faults: { crash_after: 2, cuda_oom_batch: 8 },
    });
    expect(parseFaults(['explode=1']).ok).toBe(false);
    expect(parseFaults(['hang-after=0']).ok).toBe(false);
  });

  it('rejects an algorithm the profile does not support, and masks the API key', () => {
    expect(planLaunch(profile, { speculative_algorithm: 'STANDALONE' }, {}).ok).toBe(false);
    const r = planLaunch(profile, { api_key: 'sekret', speculative_algorithm: 'NEXTN' }, {});
    expect(r.ok && r.plan.serverArgs.api_key).toBe('***');
    expect(r.ok && r.plan.settings.speculative?.algorithm).toBe('EAGLE');
  });
});
