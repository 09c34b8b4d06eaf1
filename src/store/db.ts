// Open the campaign store: SQLite with WAL (a crash or SIGKILL never leaves a half-written trial) and migrations.
import Database from 'better-sqlite3';
import { ToolError } from '../errors.js';
import { isDiskFullError, storeFullError } from './full.js';
import { MIGRATIONS, type Migration } from './migrations/index.js';

/** An open store. Repository functions take it as their first argument. */
export type Db = Database.Database;

// Another spectune (report while tune runs) may hold the write lock briefly; wait rather than fail.
const BUSY_TIMEOUT_MS = 5000;

// Apply every migration newer than user_version, each in its own transaction.
export function migrate(db: Db, migrations: Migration[] = MIGRATIONS): number {
  const current = db.pragma('user_version', { simple: true }) as number;
  const latest = migrations.length ? migrations[migrations.length - 1].version : 0;
  if (current > latest) {
    throw new ToolError('E_STORE', `store schema version ${current} is newer than this spectune (${latest})`, {
      hint: 'upgrade spectune',
    });
  }
  for (const m of migrations) {
    if (m.version <= current) continue;
    db.transaction(() => {
      db.exec(m.sql);
      db.pragma(`user_version = ${m.version}`);
    })();
  }
  return latest;
}

// Open (or create) a store file, or ':memory:' for tests.
export function openStore(path: string): Db {
  let db: Db;
  try {
    db = new Database(path);
  } catch (e) {
    if (isDiskFullError(e, path)) throw storeFullError(path, e);
    throw new ToolError('E_STORE', `cannot open store ${path}: ${(e as Error).message}`, {
      hint: 'check the store path in the config and its directory permissions',
      cause: e,
    });
  }
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    migrate(db);
  } catch (e) {
    db.close();
    if (e instanceof ToolError) throw e;
    if (isDiskFullError(e, path)) throw storeFullError(path, e);
    throw new ToolError('E_STORE', `cannot prepare store ${path}: ${(e as Error).message}`, { cause: e });
  }
  return db;
}

// Close a store (checkpoints the WAL).
export function closeStore(db: Db): void {
  if (db.open) db.close();
}
