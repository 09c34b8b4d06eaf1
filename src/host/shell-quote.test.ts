import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { quoteArg, quoteArgv } from './shell-quote.js';

/** Strings that would run a command if they were ever interpreted by a shell. */
const HOSTILE = [
  'x; touch /tmp/pwned',
  '$(id)',
  '`id`',
  "a'b",
  'a"b',
  "it's; echo 'x'",
  'line1\nline2; id',
  '\\',
  '*',
  '~root',
  '$HOME',
  '${IFS}',
  '>',
  '|',
  '&&',
  '-rf',
  '',
  ' ',
  '\t',
  "'",
  "''",
  '!',
  '#',
  'ünïcödé ✓',
];

describe('quoteArgv', () => {
  it('round-trips every hostile string through a real POSIX shell unchanged', () => {
    for (const sh of ['/bin/sh', '/bin/bash']) {
      const line = `printf '%s\\0' ${quoteArgv(HOSTILE)}`;
      const out = execFileSync(sh, ['-c', line], { encoding: 'utf8' });
      expect(out.split('\0').slice(0, -1)).toEqual(HOSTILE);
    }
  });

  it('quotes even plain words and escapes single quotes as a closed-and-reopened quote', () => {
    expect(quoteArgv(['systemctl', 'show', 'a b'])).toBe("'systemctl' 'show' 'a b'");
    expect(quoteArg("it's")).toBe("'it'\\''s'");
  });

  it('refuses NUL bytes and empty commands', () => {
    expect(() => quoteArg('a\0b')).toThrow(expect.objectContaining({ code: 'E_UNSAFE_VALUE' }));
    expect(() => quoteArgv([])).toThrow(expect.objectContaining({ code: 'E_USAGE' }));
  });
});
