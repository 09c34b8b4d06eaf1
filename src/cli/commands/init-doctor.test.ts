// The init and doctor commands' own mistakes-in, one-line-out behaviour (no host needed: each is refused before any
// host is contacted, and nothing is written).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENGINE_NAMES } from '../../engines/index.js';
import { reportError } from '../exit.js';
import { captureIo, type Command } from '../io.js';
import { run as runDoctor } from './doctor.js';
import { run as runInit } from './init.js';

const COMMANDS: Record<string, Command> = { init: runInit, doctor: runDoctor };

// Run a command as main() does (its lazy `import(\`./commands/${name}.js\`)` is not resolvable under vite).
async function cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const { io, text } = captureIo();
  const code = await COMMANDS[argv[0]](argv.slice(1), io).catch((e: unknown) => reportError(e, io));
  return { code, ...text };
}

describe('spectune init / doctor: usage errors', () => {
  it('init keeps an existing file unless --force, before contacting the host', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'spectune-init-')), 'spectune.yaml');
    writeFileSync(file, 'mine\n');
    const r = await cli(['init', '--host', 'root@192.0.2.1', '--out', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `spectune: ${file} already exists (hint: pass --force to overwrite it, --out FILE for another file, or --dry-run to print the proposal)\n`,
    );
    expect(readFileSync(file, 'utf8')).toBe('mine\n');
    const missing = await cli(['init', '--host', 'root@192.0.2.1', '--out', '/nonexistent-dir/spectune.yaml']);
    expect(missing).toMatchObject({
      code: 2,
      stderr:
        'spectune: --out /nonexistent-dir/spectune.yaml: directory /nonexistent-dir does not exist (hint: create it first, or pass --out FILE in an existing directory)\n',
    });
  });

  it('doctor without a target, with a bad engine or a bad --itl-ms says what to pass (exit 2)', async () => {
    const cwd = process.cwd();
    process.chdir(mkdtempSync(join(tmpdir(), 'spectune-doctor-')));
    try {
      expect(await cli(['doctor'])).toMatchObject({
        code: 2,
        stderr:
          'spectune: doctor: no target: no spectune.yaml here and no --unit (hint: run `spectune init --host HOST` first, or pass -c FILE, or --host HOST --unit UNIT)\n',
      });
    } finally {
      process.chdir(cwd);
    }
    expect((await cli(['doctor', '--unit', 'x', '--engine', 'tgi'])).stderr).toBe(
      `spectune: --engine: expected one of ${ENGINE_NAMES.join(', ')}, got "tgi"\n`,
    );
    expect(await cli(['doctor', '--unit', 'x', '--itl-ms', '0'])).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(
        /^spectune: --itl-ms: expected a positive number of milliseconds, got "0" \(hint: /,
      ),
    });
  });

  it('--help shows an example for both', async () => {
    expect((await cli(['init', '--help'])).stdout).toMatch(/example:\n {2}spectune init --host root@gpu1/);
    expect((await cli(['doctor', '--help'])).stdout).toMatch(/example:\n {2}spectune doctor -c spectune.yaml/);
  });
});
