// The GPU recipe's shell scripts (scripts/gpu/), run for real with bash: how a tune stopped at its deadline maps to an
// outcome (a real `timeout -s INT` around a process that saves its result on Ctrl-C as `spectune tune` does), how
// device-run.sh reports it, and the one-line errors for a missing VOCAB or llama.cpp source.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const OUTCOME = join(ROOT, 'scripts/gpu/outcome.sh');
const tmp = mkdtempSync(join(tmpdir(), 'spectune-gpu-scripts-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function bash(script: string, env: Record<string, string> = {}) {
  const r = spawnSync('bash', ['-c', script], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
const withOutcome = (body: string, env?: Record<string, string>) => bash(`. ${JSON.stringify(OUTCOME)}\n${body}`, env);

// A stand-in for `spectune tune --json > tune.json` under campaign.sh's `timeout -s INT -k K SECS`: on SIGINT it
// writes the interrupted campaign and exits 130 (as src/cli/commands/tune.ts does), or ignores SIGINT (killed at -k).
function timedTune(name: string, onInt: 'save' | 'ignore' | 'finish') {
  const json = join(tmp, `${name}.json`);
  const body = {
    save: `trap 'echo "{\\"campaignId\\":1,\\"status\\":\\"interrupted\\",\\"trials\\":[]}" > ${json}; exit 130' INT; sleep 20 >/dev/null 2>&1 & wait`,
    ignore: `trap '' INT; sleep 4`,
    finish: `echo '{"campaignId":1,"status":"done","trials":[]}' > ${json}`,
  }[onInt];
  return withOutcome(
    `timeout -s INT -k 1 1 bash -c ${JSON.stringify(body)}; rc=$?; echo "rc=$rc outcome=$(tune_outcome $rc ${json})"`,
  );
}

describe('scripts/gpu/outcome.sh: a tune stopped at its deadline is not a failure', () => {
  it('Ctrl-C at the deadline with the interrupted campaign saved: timeout exits 124, the outcome is 3', () => {
    expect(timedTune('saved', 'save').stdout.trim()).toBe('rc=124 outcome=3');
  });
  it('a tune that finished before the deadline: outcome 0', () => {
    expect(timedTune('done', 'finish').stdout.trim()).toBe('rc=0 outcome=0');
  });
  it('a tune that ignored Ctrl-C and was killed 1 s later (137, nothing saved): a failure', () => {
    expect(timedTune('killed', 'ignore').stdout.trim()).toBe('rc=137 outcome=1');
  });
  it('the deadline hit but tune.json does not say interrupted (it failed on its own): a failure', () => {
    const json = join(tmp, 'failed.json');
    writeFileSync(json, '{"campaignId":1,"status":"failed"}');
    expect(
      withOutcome(`tune_outcome 124 ${json}; tune_outcome 124 ${join(tmp, 'absent.json')}; tune_outcome 1 ${json}`)
        .stdout.split('\n')
        .filter(Boolean),
    ).toEqual(['1', '1', '1']);
  });
  it('merging phases: a failure outranks a deadline stop, which outranks done', () => {
    const pairs = [
      [0, 0, 0],
      [0, 3, 3],
      [3, 0, 3],
      [3, 1, 1],
      [1, 3, 1],
      [2, 3, 2],
      [3, 3, 3],
      [0, 124, 124],
    ];
    const out = withOutcome(pairs.map(([a, b]) => `merge_outcome ${a} ${b}`).join('\n'))
      .stdout.split('\n')
      .filter(Boolean)
      .map(Number);
    expect(out).toEqual(pairs.map((p) => p[2]));
  });
  it.each([
    [0, 0, 'device-run 7: done'],
    [
      3,
      0,
      'device-run 7: stopped at its deadline with results saved (results-7.tar.gz); run the same phases again to resume',
    ],
    [1, 1, 'device-run 7: FAILED (campaign exit 1; see log-7.txt)'],
    [2, 2, 'device-run 7: FAILED (campaign exit 2; see log-7.txt)'],
  ])('device-run.sh on campaign outcome %i exits %i and says so', (rc, code, line) => {
    const r = withOutcome(`device_outcome ${rc} 7`);
    expect(r.code).toBe(code);
    expect(r.stdout).toBe(`${line}\n`);
  });
});

describe('campaign.sh and make-bundle.sh: missing inputs are one line naming the variable', () => {
  const base = {
    RESULTS: join(tmp, 'results'),
    WORK: join(tmp, 'work'),
    LLAMA_SERVER: join(tmp, 'no-llama-server'),
    DEADLINE_EPOCH: '',
  };

  it('the models phase without a vocab GGUF: exit 2, one line naming VOCAB and how to set it, nothing run', () => {
    const r = bash(`bash ${ROOT}/scripts/gpu/campaign.sh models`, { ...base, VOCAB: join(tmp, 'nope.gguf') });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toEqual([
      `VOCAB: no vocab GGUF at ${join(tmp, 'nope.gguf')}: set VOCAB=/path/to/ggml-vocab-llama-spm.gguf (models/ of the source scripts/llamacpp/unpack-llama-src.sh unpacks, or /var/lib/spectune-llama/vocab/ after scripts/llamacpp/build-llama-server.sh)`,
    ]);
  });

  it('the default VOCAB ($LLAMA_SRC/models/...) when LLAMA_SRC is not unpacked: the same line with that path', () => {
    const r = bash(`unset VOCAB LLAMA_SRC; bash ${ROOT}/scripts/gpu/campaign.sh prepare`, base);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(
      `VOCAB: no vocab GGUF at ${join(tmp, 'work')}/llama.cpp/models/ggml-vocab-llama-spm.gguf: set VOCAB=`,
    );
  });

  it('the build phase without the llama.cpp source or a llama-server: exit 2, one line naming LLAMA_SRC', () => {
    const r = bash(`bash ${ROOT}/scripts/gpu/campaign.sh build`, { ...base, LLAMA_SRC: join(tmp, 'no-src') });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([
      `LLAMA_SRC: no llama.cpp source at ${join(tmp, 'no-src')}: run scripts/llamacpp/unpack-llama-src.sh DIR and set LLAMA_SRC=DIR/llama.cpp (or LLAMA_SERVER=an existing CUDA llama-server)`,
    ]);
  });

  it('make-bundle.sh with a VOCAB that is not there: exit 2, one line naming VOCAB, no bundle written', () => {
    const src = join(tmp, 'src/llama.cpp');
    mkdirSync(src, { recursive: true });
    writeFileSync(join(src, 'CMakeLists.txt'), '');
    const dest = join(tmp, 'bundle');
    const r = bash(
      `bash ${ROOT}/scripts/gpu/make-bundle.sh ${dest} ${src}; echo "rc=$? files: $(ls ${dest} | wc -l)"`,
      { VOCAB: join(tmp, 'nope.gguf') },
    );
    expect(r.stderr.trim().split('\n')).toEqual([
      `make-bundle: VOCAB: no vocab GGUF at ${join(tmp, 'nope.gguf')}: set VOCAB=/path/to/ggml-vocab-llama-spm.gguf`,
    ]);
    expect(r.stdout).toBe('rc=2 files: 0\n');
  });
});

describe('the GPU recipe as the docs give it', () => {
  const docs = ['README.md', 'scripts/gpu/README.md', 'docs/gpu/README.md'];
  it.each(docs)('%s: every script its bash blocks run exists in the checkout', (doc) => {
    const text = readFileSync(join(ROOT, doc), 'utf8');
    const blocks = [...text.matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => m[1]).join('\n');
    const scripts = [...new Set([...blocks.matchAll(/(?:bash|node) (scripts\/[\w/.-]+)/g)].map((m) => m[1]))];
    if (doc !== 'README.md') expect(scripts).toContain('scripts/gpu/make-bundle.sh');
    expect(scripts).toContain(
      doc === 'docs/gpu/README.md' ? 'scripts/gpu/make-bundle.sh' : 'scripts/llamacpp/unpack-llama-src.sh',
    );
    for (const s of scripts) expect(existsSync(join(ROOT, s)), `${doc} runs ${s}`).toBe(true);
  });
});
