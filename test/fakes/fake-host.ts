// A Host for unit tests: replies chosen by argv matchers, an in-memory file system, and a record of every call.
import { ToolError } from '../../src/errors.js';
import type { CommandResult, ExecOptions, Host } from '../../src/host/types.js';

/** What a matched command answers (missing fields: success with empty output). */
export type FakeReply = Partial<Pick<CommandResult, 'exitCode' | 'signal' | 'timedOut' | 'stdout' | 'stderr'>>;

/** An argv prefix (each element a string or a RegExp) or a predicate. */
export type ArgvMatcher = (string | RegExp)[] | ((argv: string[]) => boolean);

/** One recorded call. */
export type FakeCall =
  | { kind: 'exec'; argv: string[]; opts?: ExecOptions }
  | { kind: 'readFile'; path: string }
  | { kind: 'writeFile'; path: string; content: string; mode?: number };

interface Rule {
  match: ArgvMatcher;
  reply: FakeReply | ((argv: string[]) => FakeReply | Promise<FakeReply>);
}

// Whether argv matches a prefix matcher or predicate.
function matches(m: ArgvMatcher, argv: string[]): boolean {
  if (typeof m === 'function') return m(argv);
  return m.every((p, i) => (typeof p === 'string' ? argv[i] === p : argv[i] !== undefined && p.test(argv[i])));
}

/** A scripted host: the newest matching rule answers; unmatched commands fail with exit 127 and are listed. */
export class FakeHost implements Host {
  readonly name: string;
  readonly calls: FakeCall[] = [];
  readonly files = new Map<string, string>();
  readonly unmatched: string[][] = [];
  /** Paths whose writes fail with permission denied (to test "nothing half-applied"). */
  readonly readOnly: RegExp[] = [];
  private readonly rules: Rule[] = [];

  constructor(name = 'root@fake') {
    this.name = name;
  }

  // Add a reply for commands matching `match` (later rules win over earlier ones).
  on(match: ArgvMatcher, reply: Rule['reply']): this {
    this.rules.unshift({ match, reply });
    return this;
  }

  // Run a command against the rules.
  async exec(argv: string[], opts?: ExecOptions): Promise<CommandResult> {
    this.calls.push({ kind: 'exec', argv: [...argv], opts });
    const rule = this.rules.find((r) => matches(r.match, argv));
    if (!rule) this.unmatched.push([...argv]);
    const reply = rule
      ? typeof rule.reply === 'function'
        ? await rule.reply(argv)
        : rule.reply
      : { exitCode: 127, stderr: `fake host: no reply for ${argv.join(' ')}` };
    return {
      host: this.name,
      argv,
      exitCode: reply.exitCode ?? 0,
      signal: reply.signal ?? null,
      timedOut: reply.timedOut ?? false,
      durationMs: 1,
      stdout: reply.stdout ?? '',
      stderr: reply.stderr ?? '',
    };
  }

  // Read from the in-memory file system.
  async readFile(path: string): Promise<string> {
    this.calls.push({ kind: 'readFile', path });
    const text = this.files.get(path);
    if (text === undefined) throw new ToolError('E_FILE_NOT_FOUND', `${path}: no such file`);
    return text;
  }

  // Write to the in-memory file system (or fail for read-only paths).
  async writeFile(path: string, content: string, opts: { mode?: number } = {}): Promise<void> {
    this.calls.push({ kind: 'writeFile', path, content, mode: opts.mode });
    if (this.readOnly.some((re) => re.test(path)))
      throw new ToolError('E_NO_PERMISSION', `${this.name}: ${path}: permission denied`);
    this.files.set(path, content);
  }

  async close(): Promise<void> {}

  // The argv of every exec, in order.
  execs(): string[][] {
    return this.calls.filter((c): c is Extract<FakeCall, { kind: 'exec' }> => c.kind === 'exec').map((c) => c.argv);
  }

  // The paths written, in order.
  writes(): string[] {
    return this.calls
      .filter((c): c is Extract<FakeCall, { kind: 'writeFile' }> => c.kind === 'writeFile')
      .map((c) => c.path);
  }
}
