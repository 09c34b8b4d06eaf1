// Spectune's own local state (the store, the action log, the ssh control directory, a local lock): whether each
// path can be written, judged before the first change to any host, with the errno in words and the fix.
import { accessSync, constants, statSync, statfsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ToolError } from './errors.js';

/** Below this much free space a local write is judged to fail (ENOSPC): a trial's rows and log lines need some. */
export const MIN_FREE_BYTES = 1024 * 1024;

/** errno codes of a local write, in words. */
const ERRNO_WORDS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  ENOTDIR: 'a part of the path is a file, not a directory',
  EISDIR: 'is a directory',
  EIO: 'input/output error',
  ENOENT: 'no such file or directory',
  ELOOP: 'too many levels of symbolic links',
  ENAMETOOLONG: 'file name too long',
  EEXIST: 'a part of the path is a file, not a directory',
};

// An errno code in words: "permission denied (EACCES)".
export function describeErrno(code: string): string {
  return ERRNO_WORDS[code] ? `${ERRNO_WORDS[code]} (${code})` : code;
}

/** One local path a command writes. */
export interface LocalPath {
  /** What it is, for the message: "store", "action log", "ssh control directory", "lock". */
  what: string;
  path: string;
  /** A file (written or appended; its directory is created when missing) or a directory (files are created in it). */
  kind: 'file' | 'dir';
  /** The file's directory must be writable too (SQLite writes its journal next to the store). */
  dirToo?: boolean;
  /** How to fix it, for the hint. */
  fix: string;
}

/** A path that cannot be written: where it failed and why. */
export interface LocalPathProblem extends LocalPath {
  /** The path the check failed on (the file, or the directory where it would be created). */
  at: string;
  errno: string;
  /** Free bytes where it failed (ENOSPC only). */
  freeBytes?: number;
}

// errno of a failed fs call ("EIO" when it has none).
function errnoOf(e: unknown): string {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  return typeof code === 'string' ? code : 'EIO';
}

// The nearest existing path at or above `path`, or the errno that stops the walk (ENOTDIR, EACCES on a parent).
function nearestExisting(path: string): { at: string; isDir: boolean } | { at: string; errno: string } {
  for (let p = path; ; p = dirname(p)) {
    try {
      return { at: p, isDir: statSync(p).isDirectory() };
    } catch (e) {
      const code = errnoOf(e);
      // ENOTDIR: a file further up; walk on to name it.
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || dirname(p) === p) return { at: p, errno: code };
    }
  }
}

// Whether a directory takes new files: write+search rights (EROFS too: access() reports a read-only mount) and free space.
function judgeDir(dir: string): { errno: string; freeBytes?: number } | null {
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch (e) {
    return { errno: errnoOf(e) };
  }
  try {
    const s = statfsSync(dir);
    const freeBytes = s.bavail * s.bsize;
    if (freeBytes < MIN_FREE_BYTES && s.blocks > 0) return { errno: 'ENOSPC', freeBytes };
  } catch {
    /* no statfs here: judged by the write itself */
  }
  return null;
}

// Check one path, writing nothing: null when it can be written, else where and why not.
export function inspectLocalPath(p: LocalPath): LocalPathProblem | null {
  const full = resolve(p.path);
  const found = nearestExisting(full);
  if ('errno' in found) return { ...p, at: found.at, errno: found.errno };
  if (found.at === full && p.kind === 'file') {
    if (found.isDir) return { ...p, at: full, errno: 'EISDIR' };
    try {
      accessSync(full, constants.W_OK);
    } catch (e) {
      return { ...p, at: full, errno: errnoOf(e) };
    }
    const dir = dirname(full);
    const bad = judgeDir(dir);
    if (bad && (p.dirToo || bad.errno === 'ENOSPC' || bad.errno === 'EROFS')) return { ...p, at: dir, ...bad };
    return null;
  }
  if (!found.isDir) return { ...p, at: found.at, errno: 'ENOTDIR' };
  const bad = judgeDir(found.at);
  return bad ? { ...p, at: found.at, ...bad } : null;
}

// Every problem of a list of paths (doctor reports them all).
export function inspectLocalPaths(paths: LocalPath[]): LocalPathProblem[] {
  return paths.map(inspectLocalPath).filter((x): x is LocalPathProblem => x !== null);
}

// One line of a problem: the path, where it failed, the errno in words.
export function describeLocalProblem(p: LocalPathProblem): string {
  const where = p.at === resolve(p.path) ? '' : ` (at ${p.at})`;
  const free = p.freeBytes !== undefined ? `, ${Math.floor(p.freeBytes / 1024)} KiB free` : '';
  return `${p.what} ${p.path}: cannot write it${where}: ${describeErrno(p.errno)}${free}`;
}

// Refuse to start when a local path cannot be written: one E_LOCAL_STATE line naming the path, the errno and the fix,
// thrown before the first change to any host (so nothing needs undoing).
export function preflightLocalState(paths: LocalPath[]): void {
  const problem = inspectLocalPaths(paths)[0];
  if (!problem) return;
  // A full disk is fixed by space, not by rights: say that first.
  const hint = problem.errno === 'ENOSPC' ? `free space on that file system, or ${problem.fix}` : problem.fix;
  throw new ToolError('E_LOCAL_STATE', `${describeLocalProblem(problem)}; nothing was changed on any host`, { hint });
}
