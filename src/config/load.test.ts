import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { loadConfig } from './load.js';

const dir = mkdtempSync(join(tmpdir(), 'spectune-config-'));

it('loads YAML and JSON files', async () => {
  const yaml = join(dir, 'a.yaml');
  writeFileSync(
    yaml,
    'target: {engine: vllm, endpoint: "http://h:8000", hosts: [{unit: vllm.service}]}\nspace: {num_speculative_tokens: {values: [1, 3, 5]}}\n',
  );
  expect((await loadConfig(yaml)).config.space[0].values).toEqual([1, 3, 5]);
  const json = join(dir, 'a.json');
  writeFileSync(
    json,
    JSON.stringify({
      target: { engine: 'llamacpp', endpoint: 'http://h:8080', hosts: [{ unit: 'llama.service' }] },
      space: { draft_max: { min: 2, max: 16, step: 2 } },
    }),
  );
  expect((await loadConfig(json)).config.target.engine).toBe('llamacpp');
});

it('fails with one coded line listing the first problems', async () => {
  const f = join(dir, 'bad.yaml');
  writeFileSync(f, 'target: {engine: tgi, endpoint: nope, hosts: []}\nspace: {}\nbudget: {trials: 0}\nstore: 3\n');
  const err = (await loadConfig(f).then(
    () => null,
    (e: unknown) => e,
  )) as { code: string; message: string };
  expect(err.code).toBe('E_CONFIG_INVALID');
  expect(err.message).not.toContain('\n');
  expect(err.message).toMatch(/^.*bad\.yaml:1: target\.hosts: expected at least 1 items, got \[\].*\(\+\d+ more\)$/);
});

it('reports a missing file and broken YAML', async () => {
  await expect(loadConfig(join(dir, 'none.yaml'))).rejects.toMatchObject({ code: 'E_FILE_NOT_FOUND' });
  const f = join(dir, 'broken.yaml');
  writeFileSync(f, 'target: [unclosed\n');
  await expect(loadConfig(f)).rejects.toMatchObject({
    code: 'E_CONFIG_INVALID',
    message: expect.stringContaining('not valid YAML'),
  });
});

it('judges a value with an unknown YAML tag by the schema, without a node warning on stderr (fuzz: "!Iprot")', async () => {
  const f = join(dir, 'tag.yaml');
  writeFileSync(
    f,
    'target: {engine: vllm, endpoint: "http://h:8000", hosts: [{unit: vllm.service}]}\nspace: {num_speculative_tokens: {values: [1, 3]}}\nsearch:\n !Iprot": -22\n',
  );
  const warnings: string[] = [];
  const onWarning = (w: Error) => {
    warnings.push(w.message);
  };
  process.on('warning', onWarning);
  try {
    await loadConfig(f).catch((e: unknown) => e);
    await new Promise((r) => setImmediate(r));
  } finally {
    process.off('warning', onWarning);
  }
  expect(warnings).toEqual([]);
});

it('names the file and the line of the offending key in every message, and says the schema hint once (issue 19)', async () => {
  const f = join(dir, 'lines.yaml');
  const lines = [
    'target:',
    '  engine: sglang',
    '  endpoint: "http://h:30000"',
    '  hosts:',
    '    - host: gpu1',
    '      untt: sglang.service',
    'space:',
    '  speculative_num_steps: { min: 1, max: 10 }',
    '',
    '# a comment',
    'benchmark:',
    '  concurrency: [1]',
    '  requets: 4',
  ];
  writeFileSync(f, `${lines.join('\n')}\n`);
  const err = (await loadConfig(f).then(
    () => null,
    (e: unknown) => e,
  )) as { message: string; hint?: string };
  expect(err.message).toContain(`${f}:6: target.hosts.0.untt: unknown key (did you mean unit?)`);
  expect(err.message).toContain(`${f}:13: benchmark.requets: unknown key (did you mean requests?)`);
  expect(err.message).not.toContain('schema/spectune.schema.json');
  expect(err.hint).toBe('see schema/spectune.schema.json and examples/spectune.yaml');
});

it('places a YAML syntax error as file:line:column, said once', async () => {
  const f = join(dir, 'syntax.yaml');
  writeFileSync(f, 'target:\n  engine: sglang\n  hosts: [\n');
  const err = (await loadConfig(f).then(
    () => null,
    (e: unknown) => e,
  )) as { message: string };
  expect(err.message).toMatch(new RegExp(`^${f.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:\\d+:\\d+: not valid YAML: `));
  expect(err.message).not.toMatch(/at line \d+, column \d+/);
});
