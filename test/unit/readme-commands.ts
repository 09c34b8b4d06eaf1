// The `spectune ...` commands the README shows in its code blocks, parsed into argv (shared by the unit test, which
// runs the ones that need no host, and the e2e test, which runs the host commands against a real systemd test host).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './cli-run.js';

/** One command of the README. */
export interface ReadmeCommand {
  /** The README line it came from. */
  line: string;
  /** The words after `spectune`. */
  argv: string[];
  /** The shell command piped into it (`journalctl ... |`), if any. */
  pipedFrom: string | null;
}

/** Verbs run against a systemd test host (the e2e project); everything else runs on this machine. */
export const HOST_VERBS = new Set(['status', 'apply', 'rollback', 'logs', 'tune']);
/** Verbs other branches add (init, doctor): skipped while unknown here, run once merged. */
export const PENDING_VERBS = new Set(['init', 'doctor']);

// Split a shell line into words (double and single quotes; no expansion).
export function shellWords(text: string): string[] {
  const words: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g;
  for (let m = re.exec(text); m; m = re.exec(text)) words.push(m[1] ?? m[2] ?? m[3]);
  return words;
}

// Drop a trailing shell comment ("  # ...") outside quotes.
function stripComment(line: string): string {
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = null;
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]))) return line.slice(0, i).trimEnd();
  }
  return line;
}

// Every `spectune` command in the README's fenced code blocks (`$ ` prompts, `npx`, pipes and `&&` understood).
export function readReadmeCommands(text = readFileSync(join(ROOT, 'README.md'), 'utf8')): ReadmeCommand[] {
  const out: ReadmeCommand[] = [];
  let inFence = false;
  for (const raw of text.split('\n')) {
    if (raw.trimStart().startsWith('```')) {
      inFence = !inFence;
      continue;
    }
    if (!inFence) continue;
    const line = stripComment(raw.trim().replace(/^\$ /, ''));
    for (const part of line.split('&&').map((p) => p.trim())) {
      const pipes = part.split(' | ').map((p) => p.trim());
      pipes.forEach((seg, i) => {
        const words = shellWords(seg);
        const at = words[0] === 'npx' ? 1 : 0;
        if (words[at] !== 'spectune') return;
        out.push({ line: raw.trim(), argv: words.slice(at + 1), pipedFrom: i > 0 ? pipes[i - 1] : null });
      });
    }
  }
  return out;
}

// Whether a README command acts on a service host (run by the e2e test against a systemd test host).
export function needsHost(c: ReadmeCommand): boolean {
  const verb = c.argv[0];
  return (
    HOST_VERBS.has(verb) || (verb === 'diagnose' && c.argv.some((a) => a === '--host' || a === '--unit' || a === '-c'))
  );
}

// Whether a README command is for a Slurm cluster (a slurm config or a job id): test/e2e/slurm-target.test.ts runs
// those against the Slurm test cluster, not against a systemd host.
export function isSlurmCommand(c: ReadmeCommand): boolean {
  return c.argv.includes('--slurm-job') || c.argv.some((a) => /slurm.*\.ya?ml$/.test(a));
}

// A run is acceptable when the exit code is below 2 (1 = a reported failure, e.g. an unhealthy status) and no
// stack trace, internal error or flag complaint was printed; returns why not, or null.
export function judgeRun(r: {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}): string | null {
  if (r.signal) return `killed by ${r.signal}`;
  if (r.code === null || r.code >= 2) return `exit ${r.code}`;
  if (/internal error|\n\s+at \S+ \(|unknown flag|needs a value|takes no value/.test(r.stderr))
    return 'stack trace or flag error on stderr';
  return null;
}
