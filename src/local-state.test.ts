// The local preflight on real files: a read-only tmpfs (EROFS), a full one (ENOSPC), a file where a directory goes
// (ENOTDIR), a directory where a file goes (EISDIR); EACCES needs a non-root user (test/unit/local-state-cli.test.ts).
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectLocalPath, preflightLocalState, type LocalPath } from './local-state.js';

const FIX = 'pass --action-log PATH';
const at = (path: string, kind: LocalPath['kind'] = 'file', what = 'action log'): LocalPath => ({
  what,
  path,
  kind,
  fix: FIX,
});

let tmp = '';
/** Mount points of this file's tmpfs (unmounted afterwards). */
const mounts: string[] = [];

// Mount a tmpfs (root only); false when this machine does not allow it.
function mountTmpfs(dir: string, opts: string): boolean {
  mkdirSync(dir, { recursive: true });
  const ok = spawnSync('mount', ['-t', 'tmpfs', '-o', opts, 'tmpfs', dir]).status === 0;
  if (ok) mounts.push(dir);
  return ok;
}

beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'st-local-'));
});
afterAll(() => {
  for (const m of mounts.reverse()) spawnSync('umount', [m]);
  rmSync(tmp, { recursive: true, force: true });
});

describe('inspectLocalPath', () => {
  it('passes a file to create under missing directories of a writable one, and an existing writable file', () => {
    expect(inspectLocalPath(at(join(tmp, 'a', 'b', 'actions.jsonl')))).toBeNull();
    writeFileSync(join(tmp, 'existing.jsonl'), '');
    expect(inspectLocalPath(at(join(tmp, 'existing.jsonl')))).toBeNull();
  });
  it('names a file in the way of a directory (ENOTDIR) and a directory where the file goes (EISDIR)', () => {
    writeFileSync(join(tmp, 'plain'), '');
    expect(inspectLocalPath(at(join(tmp, 'plain', 'x', 'a.jsonl')))).toMatchObject({
      errno: 'ENOTDIR',
      at: join(tmp, 'plain'),
    });
    mkdirSync(join(tmp, 'dir.jsonl'));
    expect(inspectLocalPath(at(join(tmp, 'dir.jsonl')))).toMatchObject({ errno: 'EISDIR' });
  });
  it('a read-only file system is EROFS, even for root, and the preflight says so in one line with the fix', () => {
    const ro = join(tmp, 'ro');
    expect(mountTmpfs(ro, 'ro,size=1m'), 'mount -t tmpfs (root) is needed for this test').toBe(true);
    expect(inspectLocalPath(at(join(ro, 'spectune', 'actions.jsonl')))).toMatchObject({ errno: 'EROFS', at: ro });
    let err: { code?: string; message?: string; hint?: string } = {};
    try {
      preflightLocalState([at(join(ro, 'actions.jsonl'))]);
    } catch (e) {
      err = e as typeof err;
    }
    expect(err).toMatchObject({ code: 'E_LOCAL_STATE', hint: FIX });
    expect(err.message).toBe(
      `action log ${ro}/actions.jsonl: cannot write it (at ${ro}): read-only file system (EROFS); nothing was changed on any host`,
    );
    expect(err.message).not.toContain('\n');
  });
  it('a full disk is ENOSPC with the space left, for a new file and for the directory of an existing one', () => {
    const full = join(tmp, 'full');
    expect(mountTmpfs(full, 'size=256k'), 'mount -t tmpfs (root) is needed for this test').toBe(true);
    writeFileSync(join(full, 'store.db'), '');
    spawnSync('dd', ['if=/dev/zero', `of=${join(full, 'filler')}`, 'bs=4k', 'count=1000'], { stdio: 'ignore' });
    expect(inspectLocalPath(at(join(full, 'actions.jsonl')))).toMatchObject({
      errno: 'ENOSPC',
      at: full,
      freeBytes: 0,
    });
    expect(inspectLocalPath({ ...at(join(full, 'store.db'), 'file', 'store'), dirToo: true })).toMatchObject({
      errno: 'ENOSPC',
    });
    expect(() => preflightLocalState([at(join(full, 'actions.jsonl'))])).toThrow(
      /no space left on device \(ENOSPC\), 0 KiB free; nothing was changed on any host/,
    );
  });
  it('the preflight reports the first failing path only, in list order', () => {
    writeFileSync(join(tmp, 'f2'), '');
    expect(() =>
      preflightLocalState([
        at(join(tmp, 'ok.jsonl')),
        at(join(tmp, 'f2', 'x'), 'dir', 'ssh control directory'),
        at(join(tmp, 'f2', 'y')),
      ]),
    ).toThrow(
      new RegExp(
        `^ssh control directory ${tmp}/f2/x: cannot write it \\(at ${tmp}/f2\\): a part of the path is a file`,
      ),
    );
  });
});
