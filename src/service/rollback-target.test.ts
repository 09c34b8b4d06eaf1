import { expect, it } from 'vitest';
import { describeRollbackTarget } from './deploy.js';

it('says a rollback to none returns to the unit\'s own config, not "known-good version none"', () => {
  expect(describeRollbackTarget('none')).toBe("the unit's own config (no spectune drop-in)");
  expect(describeRollbackTarget(3)).toBe('known-good version 3');
});
