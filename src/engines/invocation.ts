// Match an engine's invocations (adapter data) against the words of a command line.
import type { EngineInvocation } from './types.js';

// The last path component of a program word.
export function baseName(word: string): string {
  return word.slice(word.lastIndexOf('/') + 1);
}

/** How many words of argv, from i, one invocation takes (`python -m mod`: 3, `vllm serve`: 2), or null. */
export function matchInvocation(argv: readonly string[], i: number, inv: EngineInvocation): number | null {
  const base = baseName(argv[i] ?? '');
  if ('pythonModule' in inv) {
    return /^python[\d.]*$/.test(base) && argv[i + 1] === '-m' && argv[i + 2] === inv.pythonModule ? 3 : null;
  }
  if (!inv.program.test(base)) return null;
  const args = inv.args ?? [];
  const ok = args.every((a, k) => {
    const w = argv[i + 1 + k];
    return w !== undefined && (typeof a === 'string' ? w === a : a.test(w));
  });
  return ok ? 1 + args.length : null;
}
