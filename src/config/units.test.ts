import { expect, it } from 'vitest';
import { parseBytes, parseDurationMs, parseRatio } from './units.js';

it('parses ratios, durations and sizes', () => {
  expect(parseRatio('90%')).toBeCloseTo(0.9);
  expect(parseRatio(0.03)).toBe(0.03);
  expect(parseRatio('x%')).toBeNull();
  expect(parseDurationMs('2h')).toBe(7_200_000);
  expect(parseDurationMs('1500ms')).toBe(1500);
  expect(parseDurationMs(4, 'h')).toBe(14_400_000);
  expect(parseDurationMs('soon')).toBeNull();
  expect(parseBytes('16GiB')).toBe(16 * 2 ** 30);
  expect(parseBytes('96 GB')).toBe(96e9);
  expect(parseBytes('lots')).toBeNull();
});
