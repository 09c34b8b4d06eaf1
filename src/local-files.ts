// Local paths the user names: output paths (--out DIR, --html FILE, --md FILE, --db FILE) checked before any work and
// created one level at a time, and input files whose read errors become one-line coded errors naming the path and the fix.
import { closeSync, mkdirSync, openSync, readSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ToolError } from './errors.js';

/** The first bytes of every SQLite 3 database file. */
const SQLITE_HEADER = 'SQLite format 3\0';

// stat, or null when the path does not exist.
function statOrNull(path: string): ReturnType<typeof statSync> | null {
  try {
    return statSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
    throw new ToolError('E_INPUT_UNUSABLE', `${path}: ${(e as Error).message}`);
  }
}

// Make sure `dir` is a directory, creating missing levels one at a time (a recursive mkdir spins forever under
// /proc on Node 20); `flag` names the option in errors.
export function ensureOutputDir(flag: string, dir: string): string {
  const full = resolve(dir);
  const missing: string[] = [];
  let p = full;
  for (let st = statOrNull(p); st === null; st = statOrNull(p)) {
    missing.unshift(p);
    if (dirname(p) === p) break;
    p = dirname(p);
  }
  const existing = statOrNull(p);
  if (existing && !existing.isDirectory()) {
    throw new ToolError('E_INPUT_UNUSABLE', `${flag} ${dir}: ${p} is a file, not a directory`, {
      hint: `pick a directory, e.g. ${flag} ${dirname(full)}/spectune-out`,
    });
  }
  for (const m of missing) {
    try {
      mkdirSync(m);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? 'error';
      throw new ToolError('E_INPUT_UNUSABLE', `${flag} ${dir}: cannot create ${m} (${code})`, {
        hint: 'pick a directory you can write to',
      });
    }
  }
  return full;
}

// Check that `file` can be written: its directory exists and it is not a directory itself; `flag` names the option.
export function checkOutputFile(flag: string, file: string): void {
  const dir = dirname(resolve(file));
  const d = statOrNull(dir);
  if (!d)
    throw new ToolError('E_INPUT_UNUSABLE', `${flag} ${file}: directory ${dir} does not exist`, {
      hint: `create it first (mkdir -p ${dir}) or write elsewhere`,
    });
  if (!d.isDirectory())
    throw new ToolError('E_INPUT_UNUSABLE', `${flag} ${file}: ${dir} is not a directory`, {
      hint: 'write the file into a directory',
    });
  if (statOrNull(file)?.isDirectory())
    throw new ToolError('E_INPUT_UNUSABLE', `${flag} ${file}: is a directory`, {
      hint: `name a file, e.g. ${flag} ${file.replace(/\/+$/, '')}/report${flag === '--md' ? '.md' : '.html'}`,
    });
}

// Refuse a file that exists but is not an SQLite database (never let SQLite turn a user's file into one).
// An empty file is refused too when `mustHoldData` (reading a store), accepted otherwise (a new store).
export function assertSqliteFile(flag: string, path: string, mustHoldData: boolean): void {
  const st = statOrNull(path);
  if (!st) return;
  if (st.isDirectory())
    throw new ToolError('E_INPUT_UNUSABLE', `${flag} ${path}: is a directory, not a store`, {
      hint: 'pass the store file (default ./spectune.db)',
    });
  if (st.size === 0 && !mustHoldData) return;
  const buf = Buffer.alloc(SQLITE_HEADER.length);
  let n = 0;
  try {
    const fd = openSync(path, 'r');
    try {
      n = readSync(fd, buf, 0, buf.length, 0);
    } finally {
      closeSync(fd);
    }
  } catch (e) {
    throw new ToolError(
      'E_INPUT_UNUSABLE',
      `${flag} ${path}: cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
  if (n < buf.length || buf.toString('latin1') !== SQLITE_HEADER) {
    throw new ToolError(
      'E_INPUT_UNUSABLE',
      `${flag} ${path} is not a spectune store (not an SQLite database); it was left unchanged`,
      { hint: 'pass the store path of your spectune.yaml (default ./spectune.db)' },
    );
  }
}

/** Read errors of a user's input file, as the one-line error each is. */
const READ_ERRORS: Record<
  string,
  { code: 'E_FILE_NOT_FOUND' | 'E_NO_PERMISSION' | 'E_INPUT_UNUSABLE'; what: string; hint: string }
> = {
  ENOENT: { code: 'E_FILE_NOT_FOUND', what: 'no such file', hint: 'check the path' },
  ENOTDIR: {
    code: 'E_FILE_NOT_FOUND',
    what: 'no such file (a part of the path is a file, not a directory)',
    hint: 'check the path',
  },
  EACCES: {
    code: 'E_NO_PERMISSION',
    what: 'permission denied',
    hint: 'check its permissions (ls -l), or run as a user who can read it',
  },
  EPERM: {
    code: 'E_NO_PERMISSION',
    what: 'operation not permitted',
    hint: 'check its permissions (ls -l), or run as a user who can read it',
  },
  EISDIR: { code: 'E_INPUT_UNUSABLE', what: 'is a directory', hint: 'pass a file' },
  ELOOP: { code: 'E_INPUT_UNUSABLE', what: 'too many levels of symbolic links', hint: 'point at the file itself' },
  ENAMETOOLONG: { code: 'E_INPUT_UNUSABLE', what: 'file name too long', hint: 'check the path' },
};

// A failed read of an input file as a one-line coded error (missing, not permitted, a directory, ...); an error that
// is not a file-system one comes back as it was.
export function describeReadError(e: unknown, path: string): unknown {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  if (typeof code !== 'string' || !/^E[A-Z]+$/.test(code)) return e;
  const known = READ_ERRORS[code];
  if (known) return new ToolError(known.code, `${path}: ${known.what}`, { hint: known.hint, cause: e });
  return new ToolError('E_INPUT_UNUSABLE', `${path}: cannot read it (${code})`, { hint: 'check the file', cause: e });
}
