// The last value of a long flag in a plain argv, for facts read outside the adapters' flag tables (multi-node).

/** The value of a long flag in argv (`--flag V` or `--flag=V`; vLLM also accepts underscores), or undefined. */
export function flagValue(argv: readonly string[], names: string[]): string | undefined {
  let out: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i].replace(/_/g, '-');
    for (const n of names) {
      if (a === n && i + 1 < argv.length) out = argv[i + 1];
      else if (a.startsWith(`${n}=`)) out = argv[i].slice(n.length + 1);
    }
  }
  return out;
}

/** A whole non-negative integer, or null (a variable nobody can see is not a fact). */
export function intOf(v: string | undefined): number | null {
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : null;
}
