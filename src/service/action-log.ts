// The action log: one JSON line per stop/start/restart/deploy/rollback, on the controlling machine, so that
// `spectune diagnose --actions` can attribute a SIGTERM to whoever stopped the unit. It is the running user's own:
// a campaign's lives next to its store (<store>.actions/campaign-<id>.jsonl), apply/rollback's in the user's state
// directory ($XDG_STATE_HOME/spectune/actions.jsonl, else ~/.local/state/spectune/actions.jsonl).
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { parseActionLog } from '../diagnose/index.js';
import type { ActionRecord } from '../diagnose/index.js';
import { ToolError } from '../errors.js';
import { describeErrno } from '../local-state.js';
import { redactValue } from '../redact.js';

/** Where one action log for every user of a machine lived before 0.x: still read (when readable), never written. */
export const LEGACY_ACTION_LOG = '/var/lib/spectune/actions.jsonl';

/** The default, for help texts: the per-user file of apply/rollback (a campaign's sits next to its store). */
export const DEFAULT_ACTION_LOG = '$XDG_STATE_HOME/spectune/actions.jsonl (else ~/.local/state/spectune/actions.jsonl)';

/** Appends and reads action records. */
export interface ActionLog {
  readonly path: string | null;
  record(rec: ActionRecord): Promise<void>;
  read(filter?: { unit?: string; host?: string }): Promise<ActionRecord[]>;
}

// The running user's state directory of spectune: $XDG_STATE_HOME/spectune, else ~/.local/state/spectune.
export function userStateDir(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_STATE_HOME;
  if (xdg && isAbsolute(xdg)) return join(xdg, 'spectune');
  return join(env.HOME || homedir(), '.local', 'state', 'spectune');
}

// The override of the action log: --action-log, then $SPECTUNE_ACTION_LOG; undefined = the per-user default.
export function actionLogOverride(explicit: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  return explicit ?? (env.SPECTUNE_ACTION_LOG || undefined);
}

// The action log of apply/rollback (no campaign): the override, else the user's state directory.
export function resolveActionLogPath(explicit: string | undefined, env: NodeJS.ProcessEnv): string {
  return actionLogOverride(explicit, env) ?? join(userStateDir(env), 'actions.jsonl');
}

// The directory of a store's campaign action logs: next to the store file, named after it.
export function campaignActionLogDir(storePath: string): string {
  return `${storePath}.actions`;
}

// The action log of one campaign of a store.
export function campaignActionLogPath(storePath: string, campaignId: number): string {
  return join(campaignActionLogDir(storePath), `campaign-${campaignId}.jsonl`);
}

// Whether a record is about the given unit and host (records without a host match any host).
function matchesFilter(r: ActionRecord, filter: { unit?: string; host?: string }): boolean {
  return (!filter.unit || r.unit === filter.unit) && (!filter.host || !r.host || r.host === filter.host);
}

/** The fix of an action log that cannot be written. */
export const ACTION_LOG_FIX =
  'pass --action-log PATH or set SPECTUNE_ACTION_LOG to a file you can write (unset, it is your own: next to the store for tune, ~/.local/state/spectune for apply/rollback)';

// A failed write of the action log as the one-line E_LOCAL_STATE error; anything not an errno comes back as it was.
export function actionLogWriteError(e: unknown, path: string): unknown {
  const code = (e as NodeJS.ErrnoException | null)?.code;
  if (typeof code !== 'string' || !/^E[A-Z]+$/.test(code)) return e;
  return new ToolError('E_LOCAL_STATE', `action log ${path}: cannot write it: ${describeErrno(code)}`, {
    hint: ACTION_LOG_FIX,
    cause: e,
  });
}

// Read one JSONL file; a missing or unreadable one (the legacy file of another user) reads as empty when `lenient`.
async function readRecords(path: string, lenient: boolean): Promise<ActionRecord[]> {
  try {
    return parseActionLog(await readFile(path, 'utf8')).actions;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' || lenient) return [];
    throw e;
  }
}

/** Options of a file action log. */
export interface FileActionLogOptions {
  /** Older files read along (the legacy /var/lib/spectune log, when it exists and is readable); never written. */
  alsoRead?: string[];
}

// An action log backed by a JSONL file (directories created on first write). The first failed write throws one
// E_LOCAL_STATE line; later records are dropped, so that the rollback which that error triggers is not refused in turn.
export function createFileActionLog(path: string, opts: FileActionLogOptions = {}): ActionLog {
  let failed = false;
  return {
    path,
    async record(rec) {
      if (failed) return;
      try {
        await mkdir(dirname(path), { recursive: true });
        await appendFile(path, `${JSON.stringify(redactValue(rec))}\n`, 'utf8');
      } catch (e) {
        failed = true;
        throw actionLogWriteError(e, path);
      }
    },
    async read(filter = {}) {
      const older = await Promise.all((opts.alsoRead ?? []).filter((p) => p !== path).map((p) => readRecords(p, true)));
      const own = await readRecords(path, false);
      return [...older.flat(), ...own].filter((r) => matchesFilter(r, filter));
    },
  };
}

/** A campaign's action log: its file is known once the store has opened (or resumed) the campaign. */
export interface CampaignActionLog extends ActionLog {
  /** Write from now on to the campaign's own file. */
  bind(campaignId: number): void;
}

// The action log of a tune run: `<store>.actions/campaign-<id>.jsonl` once bound; records before that (none in
// practice: the campaign is opened before any host change) go to `<store>.actions/unbound.jsonl`.
export function createCampaignActionLog(storePath: string): CampaignActionLog {
  let log = createFileActionLog(join(campaignActionLogDir(storePath), 'unbound.jsonl'));
  return {
    get path() {
      return log.path;
    },
    bind(campaignId) {
      log = createFileActionLog(campaignActionLogPath(storePath, campaignId));
    },
    record: (rec) => log.record(rec),
    read: (filter) => log.read(filter),
  };
}

// An in-memory action log, for library callers that keep their own records and for tests.
export function createMemoryActionLog(): ActionLog & { records: ActionRecord[] } {
  const records: ActionRecord[] = [];
  return {
    path: null,
    records,
    async record(rec) {
      records.push(redactValue(rec));
    },
    async read(filter = {}) {
      return records.filter((r) => matchesFilter(r, filter));
    },
  };
}
