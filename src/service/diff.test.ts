import { describe, expect, it } from 'vitest';
import { unifiedDiff } from './diff.js';

describe('unifiedDiff', () => {
  it('is empty for equal texts', () => {
    expect(unifiedDiff('a\nb\n', 'a\nb\n', { from: 'a', to: 'b' })).toBe('');
  });
  it('shows changed lines with context and a hunk header', () => {
    const d = unifiedDiff('a\n--steps 3\nc\n', 'a\n--steps 10\nc\n', { from: 'old', to: 'new' });
    expect(d).toBe('--- old\n+++ new\n@@ -1,3 +1,3 @@\n a\n---steps 3\n+--steps 10\n c\n');
  });
  it('diffs a new file against nothing', () => {
    expect(unifiedDiff('', 'x\n', { from: '/dev/null', to: 'b' })).toBe('--- /dev/null\n+++ b\n@@ -0,0 +1,1 @@\n+x\n');
  });
});
