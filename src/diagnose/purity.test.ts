// The diagnose core is pure: no file system, processes, network or clock (time is passed in with the logs).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const DIR = import.meta.dirname;
const FORBIDDEN = [
  /from 'node:(?:fs|fs\/promises|child_process|net|http|https|dgram|os)'/,
  /\bDate\.now\(/,
  /new Date\(\)/,
  /performance\.now\(/,
  /process\.(?:env|hrtime|cpuUsage)/,
];

// Source files of the core (tests excluded), rules included.
function coreFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.isDirectory()) return coreFiles(join(dir, e.name));
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [join(dir, e.name)] : [];
  });
}

describe('diagnose core purity', () => {
  it('imports no I/O module and never reads the clock', () => {
    const offenders = coreFiles(DIR).flatMap((f) =>
      FORBIDDEN.filter((re) => re.test(readFileSync(f, 'utf8'))).map(
        (re) => `${f.slice(DIR.length + 1)}: ${re.source}`,
      ),
    );
    expect(offenders).toEqual([]);
  });
  it('keeps files small (<= 300 lines)', () => {
    const big = coreFiles(DIR)
      .map((f) => [f.slice(DIR.length + 1), readFileSync(f, 'utf8').split('\n').length] as const)
      .filter(([, n]) => n > 300);
    expect(big).toEqual([]);
  });
});
