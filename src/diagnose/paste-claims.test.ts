// A pasted excerpt only supports the claims its lines show (issue 19): "It never became ready" needs the start in
// the input and nothing served or in flight; "no stop was requested" needs systemd's job lines for the lifetime.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diagnoseLogs, renderDiagnosis } from './index.js';

const FIX = join(import.meta.dirname, '../../test/fixtures/journal/sglang');
// Everything diagnose says about an input, as an operator reads it.
function said(name: string, content: string): { cls: string; text: string } {
  const d = diagnoseLogs([{ name, content }]);
  return { cls: d.verdict.class, text: `${JSON.stringify(d)}\n${renderDiagnosis(d)}` };
}
// Lines of a real fixture that match a pattern (a paste an operator would make).
function linesOf(fixture: string, re: RegExp): string {
  return readFileSync(join(FIX, fixture, 'journal.txt'), 'utf8')
    .split('\n')
    .filter((l) => re.test(l))
    .join('\n');
}

describe('pasted-text diagnose claims only what the paste shows', () => {
  it('a one-line runtime CUDA OOM does not claim the engine never became ready', () => {
    const line = linesOf('cuda-oom-runtime', /CUDA out of memory/).split('\n')[0];
    expect(line).toMatch(/CUDA out of memory/);
    const r = said('paste', line);
    expect(r.cls).toBe('cuda_oom');
    expect(r.text).not.toMatch(/never became ready/);
    expect(r.text).toMatch(/does not show its start/);
  });

  it('a stop with requests in flight (drain lines and the SIGKILL) says it was serving, not that it never became ready', () => {
    const paste = linesOf('seed1-stop-timeout', /Gracefully exiting|timed out\. Killing|Main process exited/);
    expect(paste).toMatch(/Remaining number of requests [1-9]/);
    const r = said('paste', paste);
    expect(r.text).not.toMatch(/never became ready/);
    expect(r.text).toMatch(/in flight, so it had been serving/);
  });

  it('a one-line exit paste does not claim that no stop was requested', () => {
    const line = linesOf('external-kill-client', /Main process exited/).split('\n')[0];
    expect(line).toMatch(/Main process exited, code=killed/);
    const r = said('paste', line);
    expect(r.text).not.toMatch(/no stop was requested/);
  });

  it('the full journal of a lifetime that died at start-up still says it never became ready', () => {
    const r = said('journal.txt', readFileSync(join(FIX, 'kv-oom-single', 'journal.txt'), 'utf8'));
    expect(r.cls).toBe('kv_cache_oom');
    expect(r.text).toMatch(/never became ready/);
  });
});
