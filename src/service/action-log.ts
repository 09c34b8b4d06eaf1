// The action log: one JSON line per stop/start/restart/deploy/rollback, on the controlling machine, so that
// `spectune diagnose --actions` can attribute a SIGTERM to whoever stopped the unit.
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { parseActionLog } from '../diagnose/state.js';
import type { ActionRecord } from '../diagnose/types.js';
import { redactValue } from '../redact.js';

/** Where the action log lives unless configured (SPECTUNE_ACTION_LOG or the actionLog option). */
export const DEFAULT_ACTION_LOG = '/var/lib/spectune/actions.jsonl';

/** Appends and reads action records. */
export interface ActionLog {
  readonly path: string | null;
  record(rec: ActionRecord): Promise<void>;
  read(filter?: { unit?: string; host?: string }): Promise<ActionRecord[]>;
}

// Resolve the action log path: explicit option, then the environment, then the default.
export function resolveActionLogPath(explicit: string | undefined, env: NodeJS.ProcessEnv): string {
  return explicit ?? env.SPECTUNE_ACTION_LOG ?? DEFAULT_ACTION_LOG;
}

// Whether a record is about the given unit and host (records without a host match any host).
function matchesFilter(r: ActionRecord, filter: { unit?: string; host?: string }): boolean {
  return (!filter.unit || r.unit === filter.unit) && (!filter.host || !r.host || r.host === filter.host);
}

// An action log backed by a JSONL file (directories created on first write).
export function createFileActionLog(path: string): ActionLog {
  return {
    path,
    async record(rec) {
      await mkdir(dirname(path), { recursive: true });
      await appendFile(path, `${JSON.stringify(redactValue(rec))}\n`, 'utf8');
    },
    async read(filter = {}) {
      let text = '';
      try { text = await readFile(path, 'utf8'); } catch (e) { if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e; }
      return parseActionLog(text).actions.filter((r) => matchesFilter(r, filter));
    },
  };
}

// An in-memory action log, for library callers that keep their own records and for tests.
export function createMemoryActionLog(): ActionLog & { records: ActionRecord[] } {
  const records: ActionRecord[] = [];
  return {
    path: null,
    records,
    async record(rec) { records.push(redactValue(rec)); },
    async read(filter = {}) { return records.filter((r) => matchesFilter(r, filter)); },
  };
}
