// Strings that would run a command if any layer ever handed them to a shell unquoted (for injection tests).
export const HOSTILE: readonly string[] = [
  'x; touch /tmp/pwned',
  '$(id)',
  '`id`',
  "a'b",
  'a"b',
  "it's; echo 'x'",
  'line1\nline2; id',
  '\\',
  '*',
  '~root',
  '$HOME',
  '${IFS}',
  '>',
  '|',
  '&&',
  '-rf',
  '--help',
  '',
  ' ',
  '\t',
  "'",
  "''",
  '!',
  '#',
  'ünïcödé ✓',
];

// Attack strings that, if executed, create `${mark}-N` files (N = index + 1): check none exists afterwards.
export function makeAttacks(mark: string): string[] {
  return [
    `x; touch ${mark}-1`,
    `$(touch ${mark}-2)`,
    `\`touch ${mark}-3\``,
    `a'; touch ${mark}-4; '`,
    `"; touch ${mark}-5; "`,
    `x\ntouch ${mark}-6`,
    `x && touch ${mark}-7 || touch ${mark}-7`,
    `x | touch ${mark}-8`,
  ];
}
