// The built CLI: `node bin/spectune.js diagnose ...` — exit codes, --json shape, stdin, one-line errors.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin/spectune.js');
const SEED1 = join(ROOT, 'test/fixtures/journal/sglang/seed1-stop-timeout');
const SEED2 = join(ROOT, 'test/fixtures/journal/sglang/seed2-crash-loop-kv-oom');
let tmp = '';

// Run the CLI; never throws.
function cli(args: string[], input?: string) {
  const r = spawnSync(process.execPath, [BIN, 'diagnose', ...args], {
    cwd: ROOT,
    input: input ?? '',
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist/cli/commands/diagnose.js'))) {
    try {
      execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' });
    } catch {
      /* emitted despite other folders' type errors */
    }
  }
  tmp = mkdtempSync(join(tmpdir(), 'spectune-diag-'));
}, 120_000);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('spectune diagnose (built CLI)', () => {
  it("prints exactly one JSON object with the issue's shape and exits 0", () => {
    const r = cli([
      join(SEED1, 'journal.jsonl'),
      '--state',
      join(SEED1, 'state.txt'),
      '--actions',
      join(SEED1, 'actions.jsonl'),
      '--json',
    ]);
    expect(r.code).toBe(0);
    const d = JSON.parse(r.stdout);
    expect(Object.keys(d).slice(0, 4)).toEqual(['verdict', 'rootException', 'timeline', 'lifetimes']);
    expect(Object.keys(d.verdict)).toEqual(
      expect.arrayContaining(['class', 'cause', 'confidence', 'summary', 'evidence', 'ruledOut', 'remediation']),
    );
    expect(d.verdict.class).toBe('stop_timeout');
    expect(d.verdict.facts.stop_by).toBe('operator');
    expect(d.verdict.evidence[0]).toEqual({ line: expect.any(Number), text: expect.any(String) });
  });

  it('prints the human report with the root exception for the crash-loop seed', () => {
    const r = cli([join(SEED2, 'journal.txt'), '--state', join(SEED2, 'state.txt')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Verdict: crash_loop \(cause: kv_cache_oom\)/);
    expect(r.stdout).toContain('Root exception:');
    expect(r.stdout).toContain('in _init_model_runner');
    expect(r.stdout).toContain('RuntimeError: Not enough memory. Please try to increase --mem-fraction-static.');
    expect(r.stdout).toContain('Ruled out:');
  });

  it('reads a journal piped on stdin', () => {
    const r = cli(['--json'], execFileSync('cat', [join(SEED2, 'journal.jsonl')], { encoding: 'utf8' }));
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).verdict.cause).toBe('kv_cache_oom');
  });

  it('reads any non-empty text, even bytes that are no log, and says what the input lacked', () => {
    const junk = join(tmp, 'junk.bin');
    writeFileSync(junk, Buffer.from([0, 1, 2, 3, 255, 10, 65, 66]));
    const r = cli([junk, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const v = JSON.parse(r.stdout).verdict;
    expect(v.class).toBe('unknown');
    expect(v.missing).toEqual(expect.arrayContaining([expect.stringContaining('no timestamps')]));
    expect(cli([junk]).stdout).toContain('Collect next:');
  });

  it('takes the short unit name offline as every other command does (--unit sglang-qwen)', () => {
    const short = cli([join(SEED1, 'journal.jsonl'), '--unit', 'sglang-qwen', '--json']);
    const full = cli([join(SEED1, 'journal.jsonl'), '--unit', 'sglang-qwen.service', '--json']);
    expect(short.code, short.stderr).toBe(0);
    expect(JSON.parse(short.stdout).verdict).toEqual(JSON.parse(full.stdout).verdict);
    expect(JSON.parse(short.stdout).verdict.class).toBe('stop_timeout');
  });

  it('exits 1 with a one-line reason on unusable input', () => {
    const empty = join(tmp, 'empty.log');
    writeFileSync(empty, '');
    for (const args of [[empty], [join(tmp, 'missing.log')]]) {
      const r = cli(args);
      expect(r.code, args[0]).toBe(1);
      expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
      expect(r.stderr).not.toContain('    at ');
    }
  });

  it('maps every read error of --state/--actions/--kernel and of a log file to a one-line error naming the file', () => {
    const file = join(tmp, 'plain.txt');
    writeFileSync(file, 'x\n');
    const loop = join(tmp, 'loop');
    if (!existsSync(loop)) symlinkSync(loop, loop);
    const cases: [string[], RegExp][] = [
      [['--state', tmp, join(SEED1, 'journal.txt')], /: is a directory \(hint: pass a file\)$/],
      [
        ['--actions', join(file, 'child'), join(SEED1, 'journal.txt')],
        /plain\.txt\/child: no such file \(a part of the path is a file/,
      ],
      [['--kernel', loop, join(SEED1, 'journal.txt')], /loop: too many levels of symbolic links/],
      [[tmp], /: is a directory/],
    ];
    if (process.getuid?.() !== 0) {
      const locked = join(tmp, 'locked.txt');
      writeFileSync(locked, 'x\n');
      chmodSync(locked, 0o000);
      cases.push([
        ['--state', locked, join(SEED1, 'journal.txt')],
        /locked\.txt: permission denied \(hint: check its permissions/,
      ]);
    }
    for (const [args, message] of cases) {
      const r = cli(args);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
      expect(r.stderr.trim(), args.join(' ')).toMatch(message);
    }
  });

  it('rejects bad flags as usage errors (exit 2)', () => {
    expect(cli(['--engine', 'tgi', join(SEED1, 'journal.txt')]).code).toBe(2);
    expect(cli(['--host', 'root@x']).code).toBe(2);
  });
});
