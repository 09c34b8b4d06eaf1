// The built CLI as a real non-root user (tests run as root, where chmod stops no write): a store, action log or ssh
// control directory it cannot write is refused before any host is touched, in one line with the fix, exit 1 (not 70);
// a dry run that writes nothing here is not refused; doctor says so as that user. The host named is loopback, where
// nothing listens on ssh: a command that got past the preflight fails on ssh instead (what the old code did).
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureNonRootUser, runCliAs, type LocalUser, type UserRun } from '../e2e/helpers/nonroot.js';

const ROOT = join(import.meta.dirname, '../..');
const HOST = ['--host', 'root@127.0.0.1', '--unit', 'st-nonroot.service', '--endpoint', 'http://127.0.0.1:31999'];
let user: LocalUser;
/** A directory the user may read but not write (root's, 0755), and one of the user's own. */
let ro = '';
let own = '';

// One line on stderr, exit 1, no stack and no "bug" note.
function expectOneLine(r: UserRun, re: RegExp): void {
  expect(r.code, r.stderr).toBe(1);
  const lines = r.stderr.trim().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(re);
  expect(r.stderr).not.toMatch(/internal error|This is a bug|\n\s+at /);
}

beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist/app/local-preflight.js')))
    execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' });
  user = ensureNonRootUser();
  ro = mkdtempSync('/tmp/st-ro-');
  chmodSync(ro, 0o755);
  own = join(user.home, 'st-own');
  mkdirSync(own, { recursive: true });
  chownSync(own, user.uid, user.gid);
}, 120_000);
afterAll(() => {
  rmSync(ro, { recursive: true, force: true });
  rmSync(own, { recursive: true, force: true });
});

describe('local state as a non-root user', () => {
  it('apply and rollback with an action log in a directory it cannot write: one line naming it, EACCES in words, the fix', async () => {
    for (const verb of [['apply', '--set', 'speculative_num_steps=4'], ['rollback']]) {
      const r = await runCliAs(user, [...verb, ...HOST, '--action-log', join(ro, 'actions.jsonl')]);
      expectOneLine(
        r,
        new RegExp(
          `^spectune: action log ${ro}/actions.jsonl: cannot write it \\(at ${ro}\\): permission denied \\(EACCES\\); nothing was changed on any host \\(hint: pass --action-log PATH or set SPECTUNE_ACTION_LOG`,
        ),
      );
    }
    const env = await runCliAs(user, ['apply', '--set', 'speculative_num_steps=4', ...HOST], {
      env: { SPECTUNE_ACTION_LOG: join(ro, 'sub', 'a.jsonl') },
    });
    expectOneLine(env, /action log .*\/sub\/a\.jsonl: cannot write it .*permission denied \(EACCES\)/);
  });
  it('tune with a store in a directory it cannot write: one line naming the store, before any ssh', async () => {
    const cfg = join(own, 'spectune.yaml');
    writeFileSync(
      cfg,
      [
        'target:',
        '  engine: sglang',
        '  endpoint: http://127.0.0.1:31999',
        '  hosts:',
        '    - host: root@127.0.0.1',
        '      unit: st-nonroot.service',
        'space:',
        '  speculative_num_steps: { min: 1, max: 4 }',
        `store: ${join(ro, 'tune.db')}`,
        '',
      ].join('\n'),
    );
    chownSync(cfg, user.uid, user.gid);
    const r = await runCliAs(user, ['tune', '-c', cfg]);
    expectOneLine(
      r,
      new RegExp(
        `^spectune: store ${ro}/tune.db: cannot write it \\(at ${ro}\\): permission denied \\(EACCES\\); nothing was changed on any host \\(hint: point store:`,
      ),
    );
    // The same config with its own defaults (store next to the config): the preflight passes, ssh is what fails.
    writeFileSync(cfg, readConfigWith(join(own, 'tune.db')));
    const ok = await runCliAs(user, ['tune', '-c', cfg, '--action-log', join(own, 'a.jsonl')]);
    expect(ok.stderr).not.toMatch(/cannot write it/);
    expect(ok.stderr).toMatch(/127\.0\.0\.1/);
  });
  it('an ssh control directory it cannot write (TMPDIR) is refused too, dry run or not', async () => {
    for (const extra of [[], ['--dry-run']]) {
      const r = await runCliAs(
        user,
        ['apply', '--set', 'speculative_num_steps=4', ...HOST, '--action-log', join(own, 'a.jsonl'), ...extra],
        { env: { TMPDIR: ro } },
      );
      expectOneLine(
        r,
        new RegExp(
          `^spectune: ssh control directory ${ro}: cannot write it: permission denied \\(EACCES\\).*\\(hint: set TMPDIR`,
        ),
      );
    }
  });
  it('a dry run writes nothing here, so an unwritable action log does not stop it', async () => {
    const r = await runCliAs(user, [
      'apply',
      '--set',
      'speculative_num_steps=4',
      ...HOST,
      '--action-log',
      join(ro, 'actions.jsonl'),
      '--dry-run',
    ]);
    expect(r.stderr).not.toMatch(/cannot write it|internal error/);
    expect(r.stderr).toMatch(/127\.0\.0\.1/);
  });
  it('doctor, as that user, FAILs the local-state check with the path and the fix', async () => {
    const r = await runCliAs(user, ['doctor', ...HOST, '--json'], {
      env: { SPECTUNE_ACTION_LOG: join(ro, 'actions.jsonl') },
    });
    const j = JSON.parse(r.stdout) as {
      ok: boolean;
      checks: { id: string; status: string; summary: string; fix: string | null }[];
    };
    const local = j.checks.find((c) => c.id === 'local-state');
    expect(local).toMatchObject({
      status: 'FAIL',
      summary: expect.stringContaining(
        `action log ${ro}/actions.jsonl: cannot write it (at ${ro}): permission denied (EACCES)`,
      ),
      fix: expect.stringContaining('--action-log PATH'),
    });
    const fine = await runCliAs(user, ['doctor', ...HOST, '--json']);
    const passed = (JSON.parse(fine.stdout) as typeof j).checks.find((c) => c.id === 'local-state');
    expect(passed).toMatchObject({
      status: 'PASS',
      summary: expect.stringContaining(`${user.home}/.local/state/spectune/actions.jsonl`),
    });
  });
});

// The tune config of this file with another store.
function readConfigWith(store: string): string {
  return [
    'target:',
    '  engine: sglang',
    '  endpoint: http://127.0.0.1:31999',
    '  hosts:',
    '    - host: root@127.0.0.1',
    '      unit: st-nonroot.service',
    'space:',
    '  speculative_num_steps: { min: 1, max: 4 }',
    `store: ${store}`,
    '',
  ].join('\n');
}
