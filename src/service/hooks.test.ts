import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeHooks, runHooks } from './hooks.js';

const dir = mkdtempSync(join(tmpdir(), 'spectune-hooks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('restart hooks: argv arrays on this machine', () => {
  it('run in order, as argv (no shell: a ; is an argument)', async () => {
    const out = join(dir, 'order');
    const h = {
      preStop: [
        ['sh', '-c', 'echo one >> "$0"', out],
        ['sh', '-c', 'echo "$1" >> "$0"', out, 'two; rm -rf /nonexistent'],
      ],
      postReady: [],
      timeoutMs: 5000,
    };
    const logged: string[] = [];
    await runHooks('preStop', h, (m) => logged.push(m));
    expect(readFileSync(out, 'utf8')).toBe('one\ntwo; rm -rf /nonexistent\n');
    expect(logged[0]).toBe(`preStop hook: sh -c echo one >> "$0" ${out}`);
  });

  it('a failing or slow hook is one line naming it', async () => {
    await expect(
      runHooks('preStop', { preStop: [['false']], postReady: [], timeoutMs: 5000 }, () => {}),
    ).rejects.toMatchObject({ code: 'E_REMOTE_COMMAND', message: 'preStop hook `false` failed with exit code 1' });
    await expect(
      runHooks('postReady', { preStop: [], postReady: [['sleep', '5']], timeoutMs: 300 }, () => {}),
    ).rejects.toThrow('postReady hook `sleep 5` ran past its limit of 0 s');
  });

  it('plans show every hook with where it runs and its limit', () => {
    expect(
      describeHooks({
        preStop: [['lb-ctl', 'drain', 'gpu1']],
        postReady: [['lb-ctl', 'enable', 'gpu1']],
        timeoutMs: 60_000,
      }),
    ).toEqual([
      'preStop hook: lb-ctl drain gpu1 (on this machine, limit 60 s, before the stop)',
      'postReady hook: lb-ctl enable gpu1 (on this machine, limit 60 s, once the engine is ready)',
    ]);
  });
});
