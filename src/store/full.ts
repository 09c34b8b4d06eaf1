// A store on a full disk: SQLite's "database or disk is full" (or a write I/O error with no space left) becomes one
// coded line naming the disk and the fix. SQLite itself guarantees the file stays consistent (WAL, transactions).
import { readFileSync, realpathSync, statfsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ToolError } from '../errors.js';

/** Below this much free space a write I/O error is taken as "disk full" (SQLite may report ENOSPC as SQLITE_IOERR_*). */
const NEARLY_FULL_BYTES = 1024 * 1024;

/** Where a store lives: its filesystem's mount point and type, and the space left there. */
export interface DiskFacts {
  mount: string;
  fsType: string;
  freeBytes: number;
  totalBytes: number;
}

// The disk a path is on (longest mount point that contains it); null when it cannot be read.
export function describeDisk(path: string): DiskFacts | null {
  try {
    let dir = resolve(dirname(path));
    try {
      dir = realpathSync(dir);
    } catch {
      /* not there yet: judge by the name */
    }
    const mounts = readFileSync('/proc/self/mounts', 'utf8')
      .split('\n')
      .map((l) => l.split(' '))
      .filter((f) => f.length >= 3)
      .map(([, mnt, type]) => ({ mount: mnt.replace(/\\040/g, ' '), type }));
    const best = mounts
      .filter((m) => dir === m.mount || dir.startsWith(m.mount === '/' ? '/' : `${m.mount}/`))
      .sort((a, b) => b.mount.length - a.mount.length)[0];
    const st = statfsSync(dir);
    return {
      mount: best?.mount ?? '/',
      fsType: best?.type ?? 'unknown',
      freeBytes: st.bavail * st.bsize,
      totalBytes: st.blocks * st.bsize,
    };
  } catch {
    return null;
  }
}

// Whether an error from better-sqlite3 (or fs) means the disk is full.
export function isDiskFullError(e: unknown, path: string): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  if (code === 'SQLITE_FULL' || code === 'ENOSPC') return true;
  if (typeof code === 'string' && code.startsWith('SQLITE_IOERR')) {
    const d = describeDisk(path);
    return d !== null && d.freeBytes < NEARLY_FULL_BYTES;
  }
  return false;
}

// "4.0 MiB"-style sizes for the message.
function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(1)} GiB`;
}

// The one-line error of a store on a full disk, naming the disk and how to go on.
export function storeFullError(path: string, cause: unknown): ToolError {
  const d = describeDisk(path);
  const where = d ? ` (${d.mount}, ${d.fsType}: ${formatBytes(d.freeBytes)} free of ${formatBytes(d.totalBytes)})` : '';
  return new ToolError(
    'E_STORE_FULL',
    `store ${path}: the disk is full${where}; nothing was lost, the store is consistent`,
    {
      hint: `free space on ${d?.mount ?? `the disk of ${path}`} (or point store: in spectune.yaml at another disk), then run spectune tune --resume`,
      cause,
    },
  );
}

/** SQLite's and the file system's ways of saying the store cannot be written (not a full disk), in words. */
const UNWRITABLE: [RegExp, string][] = [
  [/^SQLITE_READONLY/, 'read-only (SQLITE_READONLY: the file, its directory or the file system refuses writes)'],
  [/^SQLITE_CANTOPEN/, 'cannot open its journal (SQLITE_CANTOPEN: its directory refuses new files?)'],
  [/^SQLITE_PERM$/, 'permission denied (SQLITE_PERM)'],
  [/^SQLITE_IOERR/, 'input/output error'],
  [/^EACCES$/, 'permission denied (EACCES)'],
  [/^EROFS$/, 'read-only file system (EROFS)'],
  [/^EPERM$/, 'operation not permitted (EPERM)'],
];

// A store that became unwritable mid-run (chmod, a read-only remount): one E_LOCAL_STATE line, or null when it is not that.
export function storeUnwritableError(e: unknown, path: string): ToolError | null {
  const code = (e as { code?: unknown } | null)?.code;
  const hit = typeof code === 'string' ? UNWRITABLE.find(([re]) => re.test(code)) : undefined;
  if (!hit) return null;
  return new ToolError('E_LOCAL_STATE', `store ${path}: cannot write it: ${hit[1]}`, {
    hint: `make ${path} and its directory writable for this user (or point store: in spectune.yaml elsewhere), then run spectune tune --resume`,
    cause: e,
  });
}

// Translate a disk-full failure of a store operation into E_STORE_FULL, an unwritable store into E_LOCAL_STATE;
// anything else is rethrown unchanged.
export function rethrowStoreError(e: unknown, path: string): never {
  if (e instanceof ToolError) throw e;
  if (isDiskFullError(e, path)) throw storeFullError(path, e);
  throw storeUnwritableError(e, path) ?? e;
}

// Wrap every method of a store-backed object so a full disk surfaces as E_STORE_FULL (sync and async methods alike).
export function guardDiskFull<T extends object>(port: T, path: string): T {
  const out = {} as Record<string, unknown>;
  for (const [k, v] of Object.entries(port)) {
    if (typeof v !== 'function') {
      out[k] = v;
      continue;
    }
    out[k] = (...args: unknown[]) => {
      let r: unknown;
      try {
        r = (v as (...a: unknown[]) => unknown).apply(port, args);
      } catch (e) {
        rethrowStoreError(e, path);
      }
      return r instanceof Promise ? r.catch((e: unknown) => rethrowStoreError(e, path)) : r;
    };
  }
  return out as T;
}
