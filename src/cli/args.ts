import { parseArgs, type ParseArgsConfig } from 'node:util';
import { parseDurationMs } from '../config/index.js';
import { ToolError } from '../errors.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** Parsing choices of one command. */
export interface ParseChoices {
  /** Options whose value may itself start with a dash (`--set --speculative-num-steps=4`). */
  dashValues?: string[];
}

// Parse flags with node's parser; its exceptions become our own one-line usage errors (a typo gets the nearest
// flag, never the whole usage).
export function parseFlags<O extends Options>(
  argv: string[],
  options: O,
  usage: string,
  allowPositionals = false,
  choices: ParseChoices = {},
) {
  const args = joinDashValues(argv, options, choices.dashValues ?? []);
  try {
    return parseArgs({ args, options, allowPositionals, strict: true });
  } catch (e) {
    throw explainParseError(e as Error & { code?: string }, options, usage);
  }
}

// `--set --speculative-num-steps=4` as `--set=--speculative-num-steps=4`, unless the next word is one of our own flags.
function joinDashValues(argv: string[], options: Options, dashValues: string[]): string[] {
  if (!dashValues.length) return argv;
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const name = argv[i].startsWith('--') ? argv[i].slice(2) : null;
    const next = argv[i + 1];
    const after = argv[i + 2];
    if (
      name !== null &&
      dashValues.includes(name) &&
      next !== undefined &&
      !next.startsWith('-') &&
      !next.includes('=') &&
      after !== undefined &&
      !after.startsWith('-')
    ) {
      throw new ToolError(
        'E_USAGE',
        `--${name} takes KEY=VALUE as one word: write --${name} ${next}=${after}, not --${name} ${next} ${after}`,
        { hint: `e.g. --${name} speculative_num_steps=4` },
      );
    }
    if (name !== null && dashValues.includes(name) && next?.startsWith('-') && !isOwnFlag(next, options)) {
      out.push(`--${name}=${next}`);
      i++;
    } else {
      out.push(argv[i]);
    }
  }
  return out;
}

// Whether a word names one of the command's flags (`--json`, `--dry-run`, `-h`).
function isOwnFlag(word: string, options: Options): boolean {
  const name = word.replace(/^--?/, '').replace(/=.*$/, '');
  return word.startsWith('--') ? name in options : Object.values(options).some((o) => o.short === name);
}

// The command's name as its usage spells it ("spectune bench"), for the hint.
function commandOf(usage: string): string {
  return /usage:\s+(spectune(?: [a-z]+)?)/.exec(usage)?.[1] ?? 'spectune';
}

// Turn node's parseArgs error into our own message with a short hint.
function explainParseError(e: Error & { code?: string }, options: Options, usage: string): ToolError {
  const help = `\`${commandOf(usage)} --help\` lists every flag with its default`;
  const quoted = /'([^']+)'/.exec(e.message)?.[1] ?? '';
  const flag = quoted.replace(/ <value>$/, '');
  switch (e.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const near = nearestFlag(flag, options);
      return new ToolError('E_USAGE', `unknown flag ${flag}${near ? `; did you mean ${near}?` : ''}`, { hint: help });
    }
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      if (/does not take an argument/.test(e.message))
        return new ToolError('E_USAGE', `${flag} takes no value`, { hint: `write ${flag.replace(/=.*$/, '')} alone` });
      if (/ambiguous/.test(e.message)) {
        return new ToolError('E_USAGE', `${flag} needs a value, got the flag after it instead`, {
          hint: `a value starting with "-" is written ${flag}=-VALUE`,
        });
      }
      return new ToolError('E_USAGE', `${flag} needs a value`, { hint: help });
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return new ToolError('E_USAGE', `unexpected argument "${quoted}": ${commandOf(usage)} takes only flags`, {
        hint: help,
      });
    default:
      return new ToolError('E_USAGE', e.message.split('\n')[0], { hint: help });
  }
}

// The closest flag to a mistyped one (see nearestName); null if none is close.
export function nearestFlag(typed: string, options: Options): string | null {
  const near = nearestName(typed.replace(/^--?/, '').replace(/=.*$/, ''), Object.keys(options));
  return near === null ? null : `--${near}`;
}

// The closest name to a mistyped one: a unique prefix, or the smallest edit distance within a third of its length.
export function nearestName(word: string, names: string[]): string | null {
  if (!word) return null;
  const prefixed = names.filter((n) => n.startsWith(word));
  if (prefixed.length === 1) return prefixed[0];
  let best: string | null = null;
  let bestD = Math.max(2, Math.floor(word.length / 3)) + 1;
  for (const n of names) {
    const d = editDistance(word, n);
    if (d < bestD) {
      best = n;
      bestD = d;
    }
  }
  return best;
}

// Levenshtein distance (small strings: flag names).
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++)
      cur.push(Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1)));
    prev = cur;
  }
  return prev[b.length];
}

// Parse a number flag, naming the flag in the error.
export function numberFlag(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n)) throw new ToolError('E_USAGE', `--${name}: expected a number, got "${value}"`);
  return n;
}

// Parse a comma-separated list of numbers ("1,16,64").
export function numberListFlag(name: string, value: string | undefined, fallback: number[]): number[] {
  if (value === undefined) return fallback;
  return value.split(',').map((v) => numberFlag(name, v.trim(), NaN));
}

// --ready-timeout S as milliseconds (undefined: the controller's default); a positive number of seconds.
export function parseReadyTimeout(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const s = numberFlag('ready-timeout', raw, NaN);
  if (!(s > 0))
    throw new ToolError('E_USAGE', `--ready-timeout: expected a positive number of seconds, got "${raw}"`, {
      hint: 'e.g. --ready-timeout 1800',
    });
  return s * 1000;
}

/** `--drain-timeout DURATION`: how long a restart waits for in-flight requests before it stops anyway; 0 = no wait. */
export function parseDrainTimeout(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const ms = parseDurationMs(raw.trim(), 's');
  if (ms === null || ms < 0) {
    throw new ToolError('E_USAGE', `--drain-timeout: expected a duration (or 0 for no wait), got "${raw}"`, {
      hint: 'e.g. --drain-timeout 2m, --drain-timeout 90s; the default is target.drainTimeout in spectune.yaml, else 10m',
    });
  }
  return ms;
}

/** `--lease DURATION`: how long a candidate may run unconfirmed before the host restores known-good; 0 turns it off. */
export function parseLease(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const ms = parseDurationMs(raw.trim(), 's');
  if (ms === null || ms < 0 || (ms > 0 && ms < 10_000)) {
    throw new ToolError('E_USAGE', `--lease: expected a duration of at least 10 s (or 0 for no lease), got "${raw}"`, {
      hint: 'e.g. --lease 5m, --lease 90s; the default is target.lease in spectune.yaml, else 5m',
    });
  }
  return ms;
}
