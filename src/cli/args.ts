import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ToolError } from '../errors.js';

type Options = NonNullable<ParseArgsConfig['options']>;

// Parse flags with node's parser, turning its exceptions into one-line usage errors.
export function parseFlags<O extends Options>(argv: string[], options: O, usage: string, allowPositionals = false) {
  try {
    return parseArgs({ args: argv, options, allowPositionals, strict: true });
  } catch (e) {
    throw new ToolError('E_USAGE', (e as Error).message.split('\n')[0], { hint: usage });
  }
}

// Parse a number flag, naming the flag in the error.
export function numberFlag(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n)) throw new ToolError('E_USAGE', `--${name}: expected a number, got "${value}"`);
  return n;
}

// Parse a comma-separated list of numbers ("1,16,64").
export function numberListFlag(name: string, value: string | undefined, fallback: number[]): number[] {
  if (value === undefined) return fallback;
  return value.split(',').map((v) => numberFlag(name, v.trim(), NaN));
}

// --ready-timeout S as milliseconds (undefined: the controller's default); a positive number of seconds.
export function parseReadyTimeout(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const s = numberFlag('ready-timeout', raw, NaN);
  if (!(s > 0)) throw new ToolError('E_USAGE', `--ready-timeout: expected a positive number of seconds, got "${raw}"`, { hint: 'e.g. --ready-timeout 1800' });
  return s * 1000;
}
