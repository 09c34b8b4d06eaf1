// Flag handling of the service commands: --set/--unset parsing and target resolution from flags.
import { describe, expect, it } from 'vitest';
import { resolveTarget } from '../../src/app/service-target.js';
import { parseReadyTimeout } from '../../src/cli/args.js';
import { parseChanges } from '../../src/cli/commands/apply.js';

describe('apply --set/--unset', () => {
  it('types values and accepts flag spellings of keys', () => {
    expect(
      parseChanges(
        [
          'speculative_num_steps=4',
          '--mem-fraction-static=0.85',
          'disable-cuda-graph=true',
          'kv_cache_dtype=fp8_e5m2',
          'x_path=a=b',
        ],
        ['cuda_graph_max_bs'],
      ),
    ).toEqual({
      speculative_num_steps: 4,
      mem_fraction_static: 0.85,
      disable_cuda_graph: true,
      kv_cache_dtype: 'fp8_e5m2',
      x_path: 'a=b',
      cuda_graph_max_bs: null,
    });
  });
  it('refuses malformed input with usage errors', () => {
    expect(() => parseChanges(['novalue'], [])).toThrow(expect.objectContaining({ code: 'E_USAGE' }));
    expect(() => parseChanges(['$(id)=1'], [])).toThrow(expect.objectContaining({ code: 'E_USAGE' }));
    expect(() => parseChanges([], [])).toThrow(/nothing to apply/);
  });
});

describe('apply --ready-timeout', () => {
  it('takes seconds (fractions too) and leaves the default to the controller when absent', () => {
    expect(parseReadyTimeout('1800')).toBe(1_800_000);
    expect(parseReadyTimeout('0.5')).toBe(500);
    expect(parseReadyTimeout(undefined)).toBeUndefined();
  });
  it('refuses anything but a positive number of seconds', () => {
    for (const bad of ['0', '-5', 'abc', '20m'])
      expect(() => parseReadyTimeout(bad)).toThrow(expect.objectContaining({ code: 'E_USAGE' }));
  });
});

describe('rollback --ready-timeout', () => {
  it('is a usage error before anything is touched when the value is bad', async () => {
    const { run } = await import('../../src/cli/commands/rollback.js');
    const { captureIo } = await import('../../src/cli/io.js');
    await expect(run(['--unit', 'llm', '--ready-timeout', '0'], captureIo().io)).rejects.toMatchObject({
      code: 'E_USAGE',
      message: expect.stringContaining('--ready-timeout'),
    });
  });
});

describe('resolveTarget', () => {
  it('acts on every rank of a two-host config, rank0 first; --rank N picks one; --host/--unit name one unit', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(`${tmpdir()}/spectune-target-`);
    const file = `${dir}/spectune.yaml`;
    writeFileSync(
      file,
      [
        'target:',
        '  engine: sglang',
        '  endpoint: http://10.0.0.1:30000',
        '  hosts:',
        '    - { host: root@10.0.0.2, unit: sglang-qwen, role: rank1 }',
        '    - { host: root@10.0.0.1, unit: sglang-qwen.service, role: rank0 }',
        'space:',
        '  speculative_num_steps: { min: 1, max: 5 }',
        'objective: { metric: decodeTokensPerSec.p50, concurrency: 1, goal: maximize }',
        '',
      ].join('\n'),
    );
    const t = await resolveTarget({ config: file }, {});
    expect(t).toMatchObject({ target: 'root@10.0.0.1', unit: 'sglang-qwen.service' });
    expect(t.ranks).toEqual([
      { target: 'root@10.0.0.1', unit: 'sglang-qwen.service', rank: 0 },
      { target: 'root@10.0.0.2', unit: 'sglang-qwen.service', rank: 1 },
    ]);
    const one = await resolveTarget({ config: file, rank: '1' }, {});
    expect(one).toMatchObject({
      target: 'root@10.0.0.2',
      unit: 'sglang-qwen.service',
      ranks: [{ target: 'root@10.0.0.2', rank: 1 }],
    });
    const picked = await resolveTarget({ config: file, host: 'root@10.0.0.9' }, {});
    expect(picked.ranks).toEqual([{ target: 'root@10.0.0.9', unit: 'sglang-qwen.service', rank: 0 }]);
    expect(picked.endpoint).toBeUndefined();
    expect(one.endpoint).toBe('http://10.0.0.1:30000');
    expect((await resolveTarget({ config: file, host: 'root@10.0.0.1', unit: 'sglang-qwen' }, {})).endpoint).toBe(
      'http://10.0.0.1:30000',
    );
    expect((await resolveTarget({ config: file, unit: 'other' }, {})).endpoint).toBeUndefined();
    await expect(resolveTarget({ config: file, rank: '2' }, {})).rejects.toMatchObject({
      code: 'E_USAGE',
      message: expect.stringContaining('expected 0..1'),
    });
    await expect(resolveTarget({ config: file, rank: 'x' }, {})).rejects.toMatchObject({ code: 'E_USAGE' });
    // --host/--unit name the unit and --rank N says which rank of its group it is: changing it alone is on purpose.
    const named = await resolveTarget({ config: file, rank: '1', host: 'root@h' }, {});
    expect(named).toMatchObject({
      ranks: [{ target: 'root@h', unit: 'sglang-qwen.service', rank: 1 }],
      rankPicked: true,
    });
    expect(t.rankPicked).toBe(false);
    await expect(resolveTarget({ rank: 'x', host: 'root@h', unit: 'u' }, {})).rejects.toMatchObject({
      code: 'E_USAGE',
      message: expect.stringContaining('expected a rank number'),
    });
  });

  it('takes flags, validates the unit and defaults the engine and action log', async () => {
    const t = await resolveTarget(
      { host: 'root@h', unit: 'llm', endpoint: 'http://h:30000' },
      { SPECTUNE_ACTION_LOG: '/tmp/a.jsonl' },
    );
    expect(t).toMatchObject({
      target: 'root@h',
      unit: 'llm.service',
      engine: 'sglang',
      endpoint: 'http://h:30000',
      actionLogPath: '/tmp/a.jsonl',
      sudo: false,
    });
    // The default is the running user's own, never the shared /var/lib/spectune (issue 19).
    expect((await resolveTarget({ unit: 'llm' }, { HOME: '/home/ann' })).actionLogPath).toBe(
      '/home/ann/.local/state/spectune/actions.jsonl',
    );
    expect(
      (await resolveTarget({ unit: 'llm' }, { HOME: '/home/ann', XDG_STATE_HOME: '/srv/ann-state' })).actionLogPath,
    ).toBe('/srv/ann-state/spectune/actions.jsonl');
    expect(
      (await resolveTarget({ unit: 'llm', 'action-log': '/x/a.jsonl' }, { SPECTUNE_ACTION_LOG: '/tmp/a.jsonl' }))
        .actionLogPath,
    ).toBe('/x/a.jsonl');
  });
  it('refuses a missing unit, an unknown engine and a hostile unit', async () => {
    await expect(resolveTarget({}, {})).rejects.toMatchObject({ code: 'E_USAGE' });
    await expect(resolveTarget({ unit: 'x', engine: 'tgi' }, {})).rejects.toMatchObject({ code: 'E_USAGE' });
    await expect(resolveTarget({ unit: 'x;id' }, {})).rejects.toMatchObject({ code: 'E_UNSAFE_VALUE' });
  });
});
