// The local paths each host-changing command writes (store, action log, ssh control directory, a local unit's lock),
// checked before the first change to any host; doctor reports the same list.
import { resolve } from 'node:path';
import type { SpectuneConfig } from '../config/index.js';
import { controlDirBase } from '../host/index.js';
import { preflightLocalState, type LocalPath } from '../local-state.js';
import { ACTION_LOG_FIX, actionLogOverride, campaignActionLogDir, resolveActionLogPath } from '../service/index.js';
import { statePaths } from '../service/unit.js';

const STORE_FIX =
  'point store: in spectune.yaml (or -c at a config whose store is) at a file in a directory you can write, e.g. store: ~/spectune/spectune.db';
const CONTROL_FIX =
  'set TMPDIR to a directory you can write (ssh keeps its control socket there), or make /tmp writable';
const LOCK_FIX = 'run as root, or pass --sudo (the unit on this machine is locked in /var/lib/spectune/<unit>)';

// The ssh control directory, when any rank is reached over ssh.
function controlPath(targets: (string | undefined)[]): LocalPath[] {
  const remote = targets.some((t) => t && t !== 'local' && t !== 'localhost');
  return remote ? [{ what: 'ssh control directory', path: controlDirBase(), kind: 'dir', fix: CONTROL_FIX }] : [];
}

// The lock directory of every rank that is this machine (its lock is written here, not over ssh), unless through sudo.
function localLocks(ranks: { target: string | undefined; unit: string }[], sudo: boolean): LocalPath[] {
  if (sudo) return [];
  return ranks
    .filter((r) => !r.target || r.target === 'local' || r.target === 'localhost')
    .map((r) => ({ what: `lock of ${r.unit}`, path: statePaths(r.unit).dir, kind: 'dir' as const, fix: LOCK_FIX }));
}

// What `tune` writes here: the store and its campaign action logs (or the override), the ssh control directory,
// a local unit's lock; a dry run writes only the control socket.
export function tuneLocalPaths(
  cfg: SpectuneConfig,
  o: { baseDir: string; env: NodeJS.ProcessEnv; actionLog?: string; dryRun: boolean },
): LocalPath[] {
  const ranks = cfg.target.hosts.map((h) => ({ target: h.host ?? undefined, unit: h.unit }));
  const ssh = cfg.target.manager === 'process' ? [] : controlPath(ranks.map((r) => r.target));
  if (o.dryRun) return ssh;
  const store = resolve(o.baseDir, cfg.store);
  const override = actionLogOverride(o.actionLog, o.env);
  const log: LocalPath = override
    ? { what: 'action log', path: override, kind: 'file', fix: ACTION_LOG_FIX }
    : { what: 'action log directory', path: campaignActionLogDir(store), kind: 'dir', fix: ACTION_LOG_FIX };
  const locks = cfg.target.manager === 'process' ? [] : localLocks(ranks, false);
  return [{ what: 'store', path: store, kind: 'file', dirToo: true, fix: STORE_FIX }, log, ...ssh, ...locks];
}

// What apply/rollback/fold write here: the action log (not fold: it logs no action), the ssh control directory, a
// local unit's lock; a dry run only the control socket.
export function serviceLocalPaths(
  t: { actionLogPath: string; ranks: { target: string | undefined; unit: string }[]; sudo: boolean },
  o: { dryRun: boolean; actionLog: boolean },
): LocalPath[] {
  const ssh = controlPath(t.ranks.map((r) => r.target));
  if (o.dryRun) return ssh;
  const log: LocalPath[] = o.actionLog
    ? [{ what: 'action log', path: t.actionLogPath, kind: 'file', fix: ACTION_LOG_FIX }]
    : [];
  return [...log, ...ssh, ...localLocks(t.ranks, t.sudo)];
}

// Refuse before any host is touched when a local path cannot be written (one E_LOCAL_STATE line with the fix).
export function preflightService(
  t: Parameters<typeof serviceLocalPaths>[0],
  o: { dryRun: boolean; actionLog: boolean },
): void {
  preflightLocalState(serviceLocalPaths(t, o));
}

// What doctor checks here, as the user running it: the campaigns' action logs next to the store (or the override),
// apply/rollback's own action log, the ssh control directory, a local unit's lock (the store has its own check).
export function doctorLocalPaths(o: {
  store: string;
  hosts: { target: string | undefined; unit: string }[];
  sudo: boolean;
  env: NodeJS.ProcessEnv;
}): LocalPath[] {
  const override = actionLogOverride(undefined, o.env);
  const logs: LocalPath[] = override
    ? [{ what: 'action log', path: override, kind: 'file', fix: ACTION_LOG_FIX }]
    : [
        { what: 'action log directory', path: campaignActionLogDir(o.store), kind: 'dir', fix: ACTION_LOG_FIX },
        { what: 'action log', path: resolveActionLogPath(undefined, o.env), kind: 'file', fix: ACTION_LOG_FIX },
      ];
  return [...logs, ...controlPath(o.hosts.map((h) => h.target)), ...localLocks(o.hosts, o.sudo)];
}
