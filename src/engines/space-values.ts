// Small helpers the engines' proposed search spaces share.
import type { ParamValue } from './types.js';

/** A number setting, or null. */
export function num(v: ParamValue | undefined): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

/** Sorted distinct numbers. */
export function distinct(xs: number[]): number[] {
  return [...new Set(xs)].sort((a, b) => a - b);
}
