import { describe, expect, it } from 'vitest';
import { isToolError } from '../errors.js';
import { patchExecStart, readExecStart } from './command-line.js';
import { splitShellCommands } from './shell-words.js';
import { locateExecStart, splitExecWords } from './systemd-words.js';

const UNIT = `[Unit]
Description=test

[Service]
Environment="STEPS=3"
ExecStart=-/opt/venv/bin/python -m sglang.launch_server \\
  --model-path "/models/My Model" \\
  # a comment line inside the continuation is ignored by systemd
  --speculative-algorithm EAGLE --speculative-num-steps \${STEPS} \\
  --speculative-eagle-topk 1 --speculative-num-draft-tokens 8 \\
  --mem-fraction-static=0.8
Restart=always
`;

const HOSTILE = ['; rm -rf /', '$(id)', '`id`', 'it\'s "quoted"', 'a b\\c', '%h and $HOME and ${X}', '--flag'];

// Decode what systemd (and then bash) would pass as the argv element at the patched position.
function decodedModelPath(execStart: string): string {
  const words = splitExecWords(execStart).words.map((w) => w.value);
  return words[words.indexOf('--model-path') + 1];
}

describe('readExecStart', () => {
  it('reads continuations, skips comment lines, resolves Environment= and applies the topk-1 rule', () => {
    const r = readExecStart(UNIT);
    expect(r.engine).toBe('sglang');
    expect(r.settings).toMatchObject({
      model_path: '/models/My Model',
      speculative_num_steps: 3,
      mem_fraction_static: 0.8,
    });
    expect(r.effective.speculative_num_draft_tokens).toBe(4);
    expect(r.indirections).toEqual([{ key: 'speculative_num_steps', expression: '${STEPS}', resolved: 3 }]);
    expect(r.problems.map((p) => p.flag)).toContain('--speculative-num-draft-tokens');
  });

  it('keeps unknown variables as written and reports them', () => {
    const r = readExecStart('/usr/bin/llama-server -m ${MODEL} --spec-draft-n-max ${N}', {}, {});
    expect(r.engine).toBe('llamacpp');
    expect(r.indirections.map((i) => [i.key, i.resolved])).toEqual([
      ['model', null],
      ['spec_draft_n_max', null],
    ]);
    expect(readExecStart('/usr/bin/llama-server --spec-draft-n-max ${N}', { N: '6' }).settings.spec_draft_n_max).toBe(
      6,
    );
  });

  it('says "wrapper" for a unit that runs a script', () => {
    const r = readExecStart('[Service]\nExecStart=/usr/local/bin/start-llm.sh\n');
    expect(r.engine).toBeNull();
    expect(r.location?.kind).toBe('wrapper');
    expect(r.warnings.join('\n')).toMatch(
      /wrapper script \/usr\/local\/bin\/start-llm\.sh: flags cannot be read\/patched/,
    );
  });

  it('uses the last non-empty ExecStart= of [Service] and ignores [Install]', () => {
    const loc = locateExecStart(
      '[Service]\nExecStart=/bin/a\nExecStart=\nExecStart=/bin/b x\n[Install]\nExecStart=/bin/c\n',
    );
    expect(loc?.value).toBe('/bin/b x');
  });
});

describe('patchExecStart', () => {
  it('changes one value and leaves every other byte alone', () => {
    const p = patchExecStart(UNIT, 'sglang', { mem_fraction_static: 0.85 });
    const before = locateExecStart(UNIT)!.value;
    expect(p.execStart).toBe(before.replace('--mem-fraction-static=0.8', '--mem-fraction-static=0.85'));
    expect(p.changed).toEqual([{ key: 'mem_fraction_static', from: 0.8, to: 0.85 }]);
  });

  it('replaces a variable reference with a literal and says so', () => {
    const p = patchExecStart(UNIT, 'sglang', { speculative_num_steps: 5 });
    expect(p.execStart).toContain('--speculative-num-steps 5 \\');
    expect(p.warnings.join()).toMatch(/replaced the reference \$\{STEPS\}/);
    expect(readExecStart(p.execStart).settings.speculative_num_steps).toBe(5);
  });

  it('adds a missing flag in the continuation style and removes one with its value', () => {
    const p = patchExecStart(UNIT, 'sglang', { cuda_graph_max_bs: 16, speculative_eagle_topk: null });
    expect(p.execStart).toMatch(/--mem-fraction-static=0\.8 \\\n {2}--cuda-graph-max-bs 16$/);
    expect(p.execStart).not.toContain('--speculative-eagle-topk');
    expect(p.execStart).toContain(' \\\n  --speculative-num-draft-tokens 8 \\');
  });

  it.each(HOSTILE)('quotes the hostile value %j so systemd passes it as one literal argument', (value) => {
    const p = patchExecStart(UNIT, 'sglang', { model_path: value });
    expect(decodedModelPath(p.execStart)).toBe(value);
    expect(readExecStart(p.execStart).argv).toContain('--speculative-num-steps');
  });

  it.each(['a\nExecStartPre=/bin/sh -c id', 'nul\0byte', 'tab\there'])('refuses %j with E_UNSAFE_VALUE', (value) => {
    let err: unknown;
    try {
      patchExecStart(UNIT, 'sglang', { model_path: value });
    } catch (e) {
      err = e;
    }
    expect(isToolError(err) && err.code).toBe('E_UNSAFE_VALUE');
  });

  it('patches inside a bash -c wrapper and re-quotes for both systemd and bash', () => {
    const unit = `[Service]\nExecStart=/bin/bash -c 'source /etc/env; exec /usr/bin/llama-server -m "$M" --spec-draft-n-max 4 --port 8080'\n`;
    for (const value of HOSTILE) {
      const p = patchExecStart(unit, 'llamacpp', { model_draft: value, spec_draft_n_max: 8 });
      const script = splitExecWords(p.execStart).words[2].value;
      const cmd = splitShellCommands(script)[1].map((w) => w.value);
      expect(cmd).toEqual([
        'exec',
        '/usr/bin/llama-server',
        '-m',
        '$M',
        '--spec-draft-n-max',
        '8',
        '--port',
        '8080',
        '--spec-draft-model',
        value,
      ]);
    }
  });

  it('skips a shell function named like the engine and patches the real call', () => {
    const unit = `ExecStart=/bin/bash -c 'llama-server() { echo "$@"; }; llama-server -m x --port 1'`;
    const p = patchExecStart(unit, 'llamacpp', { port: 2 });
    expect(p.execStart).toBe(`/bin/bash -c 'llama-server() { echo "$@"; }; llama-server -m x --port 2'`);
  });

  it('refuses to patch a wrapper script or the wrong engine, with a hint', () => {
    const codes: string[] = [];
    for (const [text, engine] of [
      ['/opt/run.sh --x', 'sglang'],
      ['/usr/bin/llama-server -m x', 'sglang'],
    ] as const) {
      try {
        patchExecStart(text, engine, { port: 1 });
      } catch (e) {
        if (isToolError(e)) codes.push(`${e.code}:${e.hint ? 'hint' : ''}`);
      }
    }
    expect(codes).toEqual(['E_ENGINE_FLAG:hint', 'E_ENGINE_FLAG:hint']);
  });
});

describe('splitExecWords', () => {
  it('handles prefixes, C escapes, $$ and %% the way systemd does', () => {
    const w = splitExecWords(`-@/bin/x "a\\tb" 'c d' \\x41 $$HOME %%h e"f g"h`);
    expect(w.prefix).toBe('-@');
    expect(w.words.map((x) => x.value)).toEqual(['/bin/x', 'a\tb', 'c d', 'A', '$HOME', '%h', 'ef gh']);
  });
});
