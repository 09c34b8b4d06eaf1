// Traceback reassembly: prefixes per dialect, chains (root = first block), multi-line messages, interleaving.
import { describe, expect, it } from 'vitest';
import { stripAppPrefix } from './prefix.js';
import { TracebackAssembler, type TracebackChain } from './traceback.js';

// Feed lines (one stream per vLLM tag, as the collector does) and collect the chains.
function assemble(lines: string[]): TracebackChain[] {
  const chains: TracebackChain[] = [];
  const a = new TracebackAssembler((c) => chains.push(c));
  lines.forEach((l, i) => {
    const app = stripAppPrefix(l);
    a.feed(app.tag ?? 'main', i + 1, app, 0);
  });
  a.flush();
  return chains;
}

describe('TracebackAssembler', () => {
  it('reads a vLLM chain with the prefix on every line; the root is the first block', () => {
    const p = '(EngineCore_DP0 pid=7) ERROR 04-02 14:00:01 [core.py:708] ';
    const chains = assemble([
      `${p}Traceback (most recent call last):`,
      `${p}  File "/v/worker.py", line 10, in load`,
      `${p}    self.alloc()`,
      `${p}torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB.`,
      `${p}During handling of the above exception, another exception occurred:`,
      `${p}Traceback (most recent call last):`,
      `${p}  File "/v/core.py", line 5, in run`,
      `${p}RuntimeError: wrapper`,
    ]);
    expect(chains).toHaveLength(1);
    expect(chains[0].blocks.map((b) => b.type)).toEqual(['torch.OutOfMemoryError', 'RuntimeError']);
    expect(chains[0].blocks[0]).toMatchObject({
      message: 'CUDA out of memory. Tried to allocate 1.00 GiB.',
      frames: [{ file: '/v/worker.py', line: 10, func: 'load', code: 'self.alloc()' }],
    });
  });

  it('keeps the SGLang context, the raw continuation lines and a multi-line message, and stops at the next record', () => {
    const chains = assemble([
      '[2026-03-09 22:40:57 TP0] Scheduler hit an exception: Traceback (most recent call last):',
      '  File "/s/cuda_graph_runner.py", line 382, in __init__',
      '    raise Exception(',
      'Exception: Capture cuda graph failed: CUDA out of memory.',
      'Possible solutions:',
      '1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)',
      '[2026-03-09 22:40:58] Received sigquit from a child process. It usually means the child failed.',
      'this line is not part of the message',
    ]);
    expect(chains).toHaveLength(1);
    expect(chains[0].context).toBe('Scheduler hit an exception:');
    expect(chains[0].blocks[0].message).toBe(
      'Capture cuda graph failed: CUDA out of memory.\nPossible solutions:\n1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)',
    );
  });

  it('separates two vLLM processes whose lines interleave', () => {
    const a = '(EngineCore_DP0 pid=7) ERROR 04-02 14:00:01 [core.py:1] ';
    const b = '(Worker_TP1 pid=9) ERROR 04-02 14:00:01 [w.py:2] ';
    const chains = assemble([
      `${a}Traceback (most recent call last):`,
      `${b}Traceback (most recent call last):`,
      `${a}  File "/a.py", line 1, in fa`,
      `${b}  File "/b.py", line 2, in fb`,
      `${b}ValueError: from b`,
      `${a}KeyError: 'from a'`,
    ]);
    const byType = Object.fromEntries(chains.map((c) => [c.blocks[0].type, c.blocks[0].frames.map((f) => f.func)]));
    expect(byType).toEqual({ KeyError: ['fa'], ValueError: ['fb'] });
  });

  it('reads a bare exception name, caret lines and a SyntaxError frame without "in"', () => {
    const chains = assemble([
      'Traceback (most recent call last):',
      '  File "/x.py", line 3, in <module>',
      '    assert ok',
      '    ^^^^^^^^^',
      'AssertionError',
      'Traceback (most recent call last):',
      '  File "/cfg.py", line 7',
      '    a = (',
      '        ^',
      'SyntaxError: unexpected EOF',
    ]);
    expect(chains.map((c) => [c.blocks[0].type, c.blocks[0].frames[0]])).toEqual([
      ['AssertionError', { file: '/x.py', line: 3, func: '<module>', code: 'assert ok' }],
      ['SyntaxError', { file: '/cfg.py', line: 7, func: '', code: 'a = (' }],
    ]);
  });
});
