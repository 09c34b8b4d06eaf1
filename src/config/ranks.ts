// Which host of a target is which rank: rank0 serves HTTP and hosts the dist-init store. Pure.

// The target's hosts rank0 first (then rank1); hosts without a role keep their order.
export function orderRanks<T extends { role?: 'rank0' | 'rank1' }>(hosts: T[]): T[] {
  const rankOf = (h: T, i: number) => (h.role === 'rank0' ? 0 : h.role === 'rank1' ? 1 : i);
  return hosts
    .map((h, i) => ({ h, k: rankOf(h, i), i }))
    .sort((a, b) => a.k - b.k || a.i - b.i)
    .map((x) => x.h);
}
