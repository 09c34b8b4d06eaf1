import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { loadConfig } from './load.js';

const dir = mkdtempSync(join(tmpdir(), 'spectune-config-'));

it('loads YAML and JSON files', async () => {
  const yaml = join(dir, 'a.yaml');
  writeFileSync(yaml, 'target: {engine: vllm, endpoint: "http://h:8000", hosts: [{unit: vllm.service}]}\nspace: {num_speculative_tokens: {values: [1, 3, 5]}}\n');
  expect((await loadConfig(yaml)).config.space[0].values).toEqual([1, 3, 5]);
  const json = join(dir, 'a.json');
  writeFileSync(json, JSON.stringify({ target: { engine: 'llamacpp', endpoint: 'http://h:8080', hosts: [{ unit: 'llama.service' }] }, space: { draft_max: { min: 2, max: 16, step: 2 } } }));
  expect((await loadConfig(json)).config.target.engine).toBe('llamacpp');
});

it('fails with one coded line listing the first problems', async () => {
  const f = join(dir, 'bad.yaml');
  writeFileSync(f, 'target: {engine: tgi, endpoint: nope, hosts: []}\nspace: {}\nbudget: {trials: 0}\nstore: 3\n');
  const err = (await loadConfig(f).then(() => null, (e: unknown) => e)) as { code: string; message: string };
  expect(err.code).toBe('E_CONFIG_INVALID');
  expect(err.message).not.toContain('\n');
  expect(err.message).toMatch(/^.*bad\.yaml: target\.hosts: expected at least 1 items, got \[\].*\(\+\d+ more\)$/);
});

it('reports a missing file and broken YAML', async () => {
  await expect(loadConfig(join(dir, 'none.yaml'))).rejects.toMatchObject({ code: 'E_FILE_NOT_FOUND' });
  const f = join(dir, 'broken.yaml');
  writeFileSync(f, 'target: [unclosed\n');
  await expect(loadConfig(f)).rejects.toMatchObject({ code: 'E_CONFIG_INVALID', message: expect.stringContaining('not valid YAML') });
});

it('judges a value with an unknown YAML tag by the schema, without a node warning on stderr (fuzz: "!Iprot")', async () => {
  const f = join(dir, 'tag.yaml');
  writeFileSync(f, 'target: {engine: vllm, endpoint: "http://h:8000", hosts: [{unit: vllm.service}]}\nspace: {num_speculative_tokens: {values: [1, 3]}}\nsearch:\n !Iprot": -22\n');
  const warnings: string[] = [];
  const onWarning = (w: Error) => { warnings.push(w.message); };
  process.on('warning', onWarning);
  try {
    await loadConfig(f).catch((e: unknown) => e);
    await new Promise((r) => setImmediate(r));
  } finally {
    process.off('warning', onWarning);
  }
  expect(warnings).toEqual([]);
});
