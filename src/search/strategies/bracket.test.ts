import { expect, it } from 'vitest';
import { nextInBracket, parabolaVertex } from './bracket.js';

const F = [100, 150, 180, 195, 200, 198, 190, 170, 140, 100];
const bracket = (lo: number, best: number, hi: number, seen: number[]) => ({
  lo,
  best,
  hi,
  f: (i: number) => (seen.includes(i) ? F[i] : null),
  seen: (i: number) => seen.includes(i),
});

it('finds the vertex of a parabola', () => {
  expect(parabolaVertex(0, 0, 1, 1, 2, 0)).toBeCloseTo(1);
  expect(parabolaVertex(0, 0, 1, 1, 2, 2)).toBeNull();
});

it('goes to the interpolated peak when both sides are measured', () => {
  expect(nextInBracket(bracket(1, 3, 7, [1, 3, 7]))).toBe(4);
});

it('bisects towards a failed or open side and stops when nothing is left', () => {
  const failedHi = { ...bracket(1, 3, 7, [1, 3, 7]), f: (i: number) => (i === 7 ? null : F[i]) };
  expect(nextInBracket(failedHi)).toBe(5);
  expect(nextInBracket(bracket(3, 3, 4, [3, 4]))).toBeNull();
  expect(nextInBracket(bracket(3, 4, 5, [3, 4, 5]))).toBeNull();
});
