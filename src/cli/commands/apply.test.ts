import { expect, it } from 'vitest';
import type { ToolError } from '../../errors.js';
import { parseChanges } from './apply.js';

// The ToolError parseChanges throws for --set values.
function errorOf(sets: string[]): ToolError {
  try {
    parseChanges(sets, []);
  } catch (e) {
    return e as ToolError;
  }
  throw new Error('expected a usage error');
}

it('refuses --set port= (an empty value) with a one-line error naming the key and the fix', () => {
  const e = errorOf(['port=']);
  expect(e.code).toBe('E_USAGE');
  expect(e.message).toBe('--set port=: empty value for port');
  expect(e.hint).toBe('give a value (--set port=VALUE) or remove the flag with --unset port');
  expect(parseChanges(['port=8001'], [])).toEqual({ port: 8001 });
});
