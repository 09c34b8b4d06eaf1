// Turn an argv-level patch back into a text edit: tokens that did not change keep their exact bytes; changed
// tokens are re-encoded in place, removed ones are cut with their leading blank, new ones appended in style.

/** One token of a command line with its raw span in the text. */
export interface TokenSpan {
  value: string;
  start: number;
  end: number;
  quote: '"' | "'" | null;
}

/** Encodes one new argv element for the text's syntax, keeping the old token's quote style if any. */
export type WordEncoder = (value: string, quote: '"' | "'" | null) => string;

interface Edit {
  start: number;
  end: number;
  text: string;
}

// Only values changed in place (same length, no flag token differs): pair tokens by position.
function onlyValuesChanged(oldArgv: string[], newArgv: string[]): boolean {
  return (
    oldArgv.length === newArgv.length &&
    oldArgv.every(
      (t, i) =>
        t === newArgv[i] ||
        (!t.startsWith('-') && !newArgv[i].startsWith('-')) ||
        t.split('=')[0] === newArgv[i].split('=')[0],
    )
  );
}

// Pair old and new tokens: positional when only values changed, longest common subsequence otherwise.
function alignTokens(oldArgv: string[], newArgv: string[]): Array<[number | null, number | null]> {
  if (onlyValuesChanged(oldArgv, newArgv)) return oldArgv.map((_, i) => [i, i]);
  const n = oldArgv.length,
    m = newArgv.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      lcs[i][j] = oldArgv[i] === newArgv[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  const pairs: Array<[number | null, number | null]> = [];
  let i = 0,
    j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && oldArgv[i] === newArgv[j]) pairs.push([i++, j++]);
    else if (j < m && (i >= n || lcs[i][j + 1] >= lcs[i + 1][j])) pairs.push([null, j++]);
    else pairs.push([i++, null]);
  }
  return pairs;
}

// The blank text to put before an appended flag: the operator's line-continuation style if they use one.
function insertSeparator(raw: string, tokens: TokenSpan[], value: string): string {
  if (!value.startsWith('-')) return ' ';
  for (let k = tokens.length - 1; k > 0; k--) {
    if (!tokens[k].value.startsWith('-')) continue;
    const gap = raw.slice(tokens[k - 1].end, tokens[k].start);
    return gap.includes('\n') && /^\s*\\\r?\n[ \t]*$/.test(gap) ? gap : ' ';
  }
  return ' ';
}

// Cut consecutive tokens: with their leading blank, or, when they start a continuation line, with the trailing one.
function deleteTokens(raw: string, tokens: TokenSpan[], gone: number[]): Edit[] {
  if (gone.length === 0) return [];
  const first = gone[0],
    last = gone[gone.length - 1];
  const prevEnd = first > 0 ? tokens[first - 1].end : tokens[first].start;
  const next = tokens[last + 1];
  if (next && raw.slice(prevEnd, tokens[first].start).includes('\n'))
    return [{ start: tokens[first].start, end: next.start, text: '' }];
  return [{ start: prevEnd, end: tokens[last].end, text: '' }];
}

// Collect the edits for one run of unmatched old/new tokens that sit between two matched tokens.
function editRun(
  raw: string,
  tokens: TokenSpan[],
  olds: number[],
  news: string[],
  after: number,
  encode: WordEncoder,
): Edit[] {
  const edits: Edit[] = [];
  const paired = Math.min(olds.length, news.length);
  for (let k = 0; k < paired; k++) {
    const t = tokens[olds[k]];
    edits.push({ start: t.start, end: t.end, text: encode(news[k], t.quote) });
  }
  edits.push(...deleteTokens(raw, tokens, olds.slice(paired)));
  if (news.length > paired) {
    const anchor = paired > 0 ? olds[paired - 1] : after;
    const pos = anchor >= 0 ? tokens[anchor].end : (tokens[0]?.start ?? raw.length);
    const text = news
      .slice(paired)
      .map((v) => insertSeparator(raw, tokens, v) + encode(v, null))
      .join('');
    edits.push({ start: pos, end: pos, text });
  }
  return edits;
}

// Rewrite `raw` so that its tokens read as `newArgv`, changing only the bytes of tokens that changed.
export function applyArgvEdits(raw: string, tokens: TokenSpan[], newArgv: string[], encode: WordEncoder): string {
  const oldArgv = tokens.map((t) => t.value);
  const edits: Edit[] = [];
  let olds: number[] = [],
    news: string[] = [],
    lastOld = -1;
  const flush = () => {
    edits.push(...editRun(raw, tokens, olds, news, lastOld, encode));
    olds = [];
    news = [];
  };
  for (const [o, n] of alignTokens(oldArgv, newArgv)) {
    if (o !== null && n !== null && oldArgv[o] === newArgv[n]) {
      flush();
      lastOld = o;
      continue;
    }
    if (o !== null) olds.push(o);
    if (n !== null) news.push(newArgv[n]);
  }
  flush();
  edits.sort((a, b) => b.start - a.start || b.end - a.end);
  let out = raw;
  for (const e of edits) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
}
