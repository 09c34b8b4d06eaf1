import { describe, expect, it } from 'vitest';
import type { ToolError } from '../errors.js';
import { nearestFlag, parseFlags } from './args.js';

const FLAGS = {
  concurrency: { type: 'string' },
  requests: { type: 'string' },
  json: { type: 'boolean' },
  set: { type: 'string', multiple: true },
  'dry-run': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;
const USAGE =
  'usage: spectune bench --url URL [--concurrency 1,16,64] ... a long usage text that must not appear in errors';

// The ToolError parseFlags throws for argv.
function errorOf(argv: string[]): ToolError {
  try {
    parseFlags(argv, FLAGS, USAGE, false, { dashValues: ['set'] });
  } catch (e) {
    return e as ToolError;
  }
  throw new Error('expected a usage error');
}

describe('parseFlags', () => {
  it('suggests the nearest flag for a typo, in our own words, without the usage', () => {
    const e = errorOf(['--concurency', '1']);
    expect(e.code).toBe('E_USAGE');
    expect(e.message).toBe('unknown flag --concurency; did you mean --concurrency?');
    expect(e.hint).toBe('`spectune bench --help` lists every flag with its default');
    expect(`${e.message} ${e.hint}`).not.toContain('a long usage text');
  });

  it("names a flag whose value is missing or is another flag, never node's parser text", () => {
    expect(errorOf(['--concurrency']).message).toBe('--concurrency needs a value');
    const amb = errorOf(['--concurrency', '--json']);
    expect(amb.message).toBe('--concurrency needs a value, got the flag after it instead');
    expect(amb.message).not.toMatch(/ambiguous|Did you forget/);
    expect(errorOf(['--json=1']).message).toBe('--json takes no value');
    expect(errorOf(['stray']).message).toBe('unexpected argument "stray": spectune bench takes only flags');
    expect(errorOf(['--frobnicate']).message).toBe('unknown flag --frobnicate');
  });

  it('takes the engine-flag form of --set (its value starts with a dash) but not our own flag as a value', () => {
    const { values } = parseFlags(
      ['--set', '--speculative-num-steps=4', '--set', 'mem_fraction_static=0.8', '--dry-run'],
      FLAGS,
      USAGE,
      false,
      { dashValues: ['set'] },
    );
    expect(values.set).toEqual(['--speculative-num-steps=4', 'mem_fraction_static=0.8']);
    expect(values['dry-run']).toBe(true);
    expect(errorOf(['--set', '--dry-run']).message).toBe('--set needs a value, got the flag after it instead');
  });

  it('explains --set KEY VALUE (space-separated) in one line with the KEY=VALUE form to write instead', () => {
    const e = errorOf(['--set', 'port', '8000', '--dry-run']);
    expect(e.code).toBe('E_USAGE');
    expect(e.message).toBe('--set takes KEY=VALUE as one word: write --set port=8000, not --set port 8000');
    expect(e.message).not.toContain('\n');
  });

  it('finds the nearest flag by edit distance or unique prefix, and none when nothing is close', () => {
    expect(nearestFlag('--reqests', FLAGS)).toBe('--requests');
    expect(nearestFlag('--conc', FLAGS)).toBe('--concurrency');
    expect(nearestFlag('--dryrun', FLAGS)).toBe('--dry-run');
    expect(nearestFlag('--zzzzzz', FLAGS)).toBeNull();
  });
});
