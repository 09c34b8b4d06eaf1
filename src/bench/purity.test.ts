// The benchmark's pure parts (SSE scanner, HTTP parser, metrics, histograms, Prometheus, prompts, request
// building, rendering) do no I/O and never read the clock: time is injected, so they test at every byte offset.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const DIR = import.meta.dirname;
const PURE = [
  'sse.ts',
  'http1-parser.ts',
  'metrics.ts',
  'histogram.ts',
  'prometheus.ts',
  'prompts.ts',
  'api.ts',
  'render.ts',
  'types.ts',
];
const FORBIDDEN = [
  /from 'node:(?:fs|fs\/promises|child_process|net|http|https|dgram|os)'/,
  /\bDate\.now\(/,
  /new Date\(\)/,
  /performance\.now\(/,
  /process\.(?:env|hrtime|cpuUsage)/,
];

describe('bench purity', () => {
  it('keeps the pure modules free of I/O and clock reads', () => {
    const offenders = PURE.flatMap((f) =>
      FORBIDDEN.filter((re) => re.test(readFileSync(join(DIR, f), 'utf8'))).map((re) => `${f}: ${re.source}`),
    );
    expect(offenders).toEqual([]);
  });

  it('keeps every bench file at 300 lines or fewer', () => {
    const files = readdirSync(DIR).filter((f) => f.endsWith('.ts'));
    const big = files
      .map((f) => [f, readFileSync(join(DIR, f), 'utf8').split('\n').length] as const)
      .filter(([, n]) => n > 300);
    expect(files.length).toBeGreaterThan(PURE.length);
    expect(big).toEqual([]);
  });
});
