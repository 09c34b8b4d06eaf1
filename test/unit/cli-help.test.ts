// Every --help shows at least one example of its own command and the defaults of its flags (timeouts included).
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureCliBuilt, runCli } from './cli-run.js';

const COMMANDS = [
  'demo',
  'diagnose',
  'bench',
  'tune',
  'report',
  'status',
  'apply',
  'rollback',
  'logs',
  'sim',
  'history',
  'fold',
];
/** Words each command's help must show with their defaults (timeouts above all). */
const MUST_SHOW: Record<string, RegExp[]> = {
  bench: [
    /--first-token-timeout S .*\(default 600\)/,
    /--stall-timeout S .*\(default 60\)/,
    /--connect-timeout S .*\(default 10\)/,
  ],
  apply: [/--ready-timeout S .*\(default 1200\)/, /--dry-run/],
  rollback: [/--ready-timeout S .*\(default 1200\)/, /--dry-run/],
  tune: [/benchmark\.timeouts default to ready 20m, connect 10s, firstToken 120s, stall 60s, total 10m/, /--dry-run/],
  demo: [/--time-scale X .*\(default 0\.01/],
  status: [/--engine sglang\|vllm\|llamacpp\s+\(default sglang\)/],
};

beforeAll(() => ensureCliBuilt(), 180_000);

describe('--help', () => {
  it.each(COMMANDS)('spectune %s --help: exit 0, an example, defaults', async (cmd) => {
    const r = await runCli([cmd, '--help']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^examples:\\n  (\\S+ \\| )?.*spectune ${cmd}( |$)`, 'm'));
    expect(r.stdout).toMatch(/\(default /);
    for (const re of MUST_SHOW[cmd] ?? []) expect(r.stdout).toMatch(re);
  });

  it('the top-level help lists examples', async () => {
    const r = await runCli(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^examples:\n {2}spectune demo$/m);
  });
});
