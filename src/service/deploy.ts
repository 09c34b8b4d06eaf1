// Performing a DeployPlan on a host: keep the version, install the drop-in atomically, daemon-reload; and the
// version history behind rollback (numbered copies plus `current` and `good` markers). Never touches the unit file.
import { ToolError, isToolError } from '../errors.js';
import { expectOk } from '../host/command-result.js';
import type { Host } from '../host/types.js';
import type { ServiceEventSink } from './events.js';
import { armLease, leasePaths, releaseLease, type LeaseOptions } from './lease.js';
import type { DeployPlan } from './plan.js';
import { reloadDaemon } from './systemd.js';
import { dropInPath, statePaths, versionPath } from './unit.js';

/** A version of spectune's drop-in: a number in the history, or "none" (no drop-in: the operator's unit alone). */
export type Version = number | 'none';

/** What a rollback returns to, in words: 'none' is the unit's own config, never "known-good version none". */
export function describeRollbackTarget(v: Version): string {
  return v === 'none' ? "the unit's own config (no spectune drop-in)" : `known-good version ${v}`;
}

/** Markers (and drop-ins of a unit whose file mode cannot be read) are world-readable like unit files. */
const FILE_MODE = 0o644;

// Read a one-line marker file; null when it does not exist.
async function readMarker(host: Host, path: string): Promise<Version | null> {
  try {
    const v = (await host.readFile(path)).trim();
    if (v === 'none') return 'none';
    return /^\d+$/.test(v) ? Number(v) : null;
  } catch (e) {
    if (isToolError(e) && e.code === 'E_FILE_NOT_FOUND') return null;
    throw e;
  }
}

// The version history markers of a unit.
// A candidate that ran provisionally and whose runtime drop-in is gone (a reboot, or the lease restored known-good)
// no longer runs: the config in force is the known-good one whatever the `current` marker still says.
export async function readVersions(
  host: Host,
  unit: string,
): Promise<{ current: Version | null; good: Version | null }> {
  const st = statePaths(unit);
  const current = await readMarker(host, st.current);
  const good = await readMarker(host, st.good);
  if (
    current !== null &&
    current !== good &&
    (await readMarker(host, leasePaths(unit).provisional)) === current &&
    !(await exists(host, leasePaths(unit).trial))
  ) {
    return { current: good, good };
  }
  return { current, good };
}

// Whether a file exists on the host.
async function exists(host: Host, path: string): Promise<boolean> {
  return (await host.exec(['test', '-e', path], { timeoutMs: 30_000 })).exitCode === 0;
}

// The kept version numbers, ascending (empty when there is no history yet).
export async function listVersions(host: Host, unit: string): Promise<number[]> {
  const r = await host.exec(['ls', '-1', '--', statePaths(unit).versionsDir], { timeoutMs: 30_000 });
  if (r.exitCode !== 0) return [];
  return r.stdout
    .split('\n')
    .map((l) => /^(\d+)\.conf$/.exec(l.trim())?.[1])
    .filter(Boolean)
    .map(Number)
    .sort((a, b) => a - b);
}

// The next free version number (1 when there is no history yet).
async function nextVersion(host: Host, unit: string): Promise<number> {
  const nums = await listVersions(host, unit);
  return nums.length ? nums[nums.length - 1] + 1 : 1;
}

// Before the first deploy, remember what runs now as the known-good baseline (the operator's own config);
// returns the version deployed now.
async function recordBaseline(host: Host, plan: DeployPlan, mode: number): Promise<Version> {
  const st = statePaths(plan.unit);
  const { current, good } = await readVersions(host, plan.unit);
  if (good !== null) return current ?? 'none';
  let baseline: Version = current ?? 'none';
  if (current === null && plan.previousDropIn !== null) {
    baseline = await nextVersion(host, plan.unit);
    await host.writeFile(versionPath(plan.unit, baseline), plan.previousDropIn, { mode });
  }
  await host.writeFile(st.good, `${baseline}\n`, { mode: FILE_MODE });
  if (current === null) await host.writeFile(st.current, `${baseline}\n`, { mode: FILE_MODE });
  return current ?? baseline;
}

// Install a drop-in text (or remove the drop-in) at a path and daemon-reload; on a failed reload put the old one back.
// `alsoRemove`: a path that goes in the same reload (the runtime candidate, when known-good is put back).
async function installDropIn(
  host: Host,
  path: string,
  text: string | null,
  previous: string | null,
  mode: number,
  alsoRemove?: string,
): Promise<void> {
  await writeOrRemove(host, path, text, mode);
  if (alsoRemove) expectOk(await host.exec(['rm', '-f', '--', alsoRemove], { timeoutMs: 30_000 }));
  try {
    await reloadDaemon(host);
  } catch (e) {
    await writeOrRemove(host, path, previous, mode).catch(() => {});
    await reloadDaemon(host).catch(() => {});
    throw e;
  }
}

// Write a file atomically, or remove it when text is null.
async function writeOrRemove(host: Host, path: string, text: string | null, mode: number): Promise<void> {
  if (text !== null) await host.writeFile(path, text, { mode });
  else expectOk(await host.exec(['rm', '-f', '--', path], { timeoutMs: 30_000 }));
}

// The unit file's permission bits (0600 stays 0600 for the drop-ins and kept versions); 0644 when unreadable.
export async function readUnitMode(host: Host, unitPath: string): Promise<number> {
  const r = await host.exec(['stat', '-c', '%a', '--', unitPath], { timeoutMs: 30_000 });
  const m = r.exitCode === 0 ? /^([0-7]{3,4})$/.exec(r.stdout.trim()) : null;
  return m ? parseInt(m[1], 8) & 0o666 : FILE_MODE;
}

// The number the plan's drop-in gets on this host if deployed now (the baseline recorded first, as applyDeploy
// would): a group takes the largest over its ranks and writes that one number on every rank.
export async function prepareVersion(host: Host, plan: DeployPlan, mode = FILE_MODE): Promise<number> {
  await recordBaseline(host, plan, mode);
  return nextVersion(host, plan.unit);
}

// Perform a plan up to daemon-reload (the restart is the controller's, after the drain check); returns the new
// version and the one it replaced (to put back if the restart cannot even be issued).
// With a lease the candidate is provisional: the lease is armed first, then the drop-in goes to /run (a reboot
// forgets it) and /etc keeps known-good; markVersionGood confirms it.
// `o.version`: the group's one number for this change (never below this host's next free one).
export async function applyDeploy(
  plan: DeployPlan,
  host: Host,
  onEvent: ServiceEventSink,
  o: { lease?: LeaseOptions; mode?: number; version?: number } = {},
): Promise<{ version: number; previous: Version }> {
  const mode = o.mode ?? FILE_MODE;
  const previous = await recordBaseline(host, plan, mode);
  const version = Math.max(o.version ?? 0, await nextVersion(host, plan.unit));
  await host.writeFile(versionPath(plan.unit, version), plan.dropInText, { mode });
  let where = plan.dropInPath;
  if (o.lease) {
    const lp = leasePaths(plan.unit);
    await armLease(host, plan.unit, o.lease);
    await host.writeFile(lp.provisional, `${version}\n`, { mode: FILE_MODE });
    await installDropIn(host, lp.trial, plan.dropInText, plan.previousTrial, mode);
    where = lp.trial;
  } else {
    await installDropIn(host, plan.dropInPath, plan.dropInText, plan.previousDropIn, mode);
  }
  await host.writeFile(statePaths(plan.unit).current, `${version}\n`, { mode: FILE_MODE });
  const leased = o.lease
    ? ` (provisional: the host restores known-good unless spectune confirms it within ${Math.round(o.lease.ms / 1000)} s)`
    : '';
  onEvent({
    type: 'log',
    ts: Date.now(),
    level: 'info',
    message: `${plan.unit}: drop-in version ${version} installed at ${host.whereIs?.(where) ?? where}, ${host.whereIs ? 'units reloaded' : 'systemd reloaded'}${leased}`,
  });
  return { version, previous };
}

// Put back a kept version (or none) in /etc, the runtime candidate removed in the same daemon-reload (leased), and
// release the lease (unless the run holds it: keepLease).
export async function restoreVersion(
  host: Host,
  unit: string,
  version: Version,
  currentText: string | null,
  o: { leased?: boolean; mode?: number; keepLease?: boolean } = {},
): Promise<void> {
  let text: string | null = null;
  if (version !== 'none') {
    try {
      text = await host.readFile(versionPath(unit, version));
    } catch (e) {
      if (isToolError(e) && e.code === 'E_FILE_NOT_FOUND') {
        throw new ToolError(
          'E_ROLLBACK_FAILED',
          `${host.name}: known-good version ${version} of ${unit} is missing from ${statePaths(unit).versionsDir}`,
        );
      }
      throw e;
    }
  }
  const lp = leasePaths(unit);
  await installDropIn(host, dropInPath(unit), text, currentText, o.mode ?? FILE_MODE, o.leased ? lp.trial : undefined);
  await host.writeFile(statePaths(unit).current, `${version}\n`, { mode: FILE_MODE });
  if (o.leased) {
    expectOk(await host.exec(['rm', '-f', '--', lp.provisional], { timeoutMs: 30_000 }));
    if (!o.keepLease) await releaseLease(host, unit);
  }
}

// Mark the deployed version as the last known-good one. A provisional candidate is confirmed first: its drop-in
// moves from /run to /etc (same ExecStart: no restart), and the lease is released. A candidate the lease already
// took back (spectune was cut off too long) is not confirmed: E_LEASE_LAPSED.
export async function markVersionGood(
  host: Host,
  unit: string,
  o: { leased?: boolean; mode?: number; keepLease?: boolean } = {},
): Promise<Version> {
  const lp = leasePaths(unit);
  const provisional = o.leased ? await readMarker(host, lp.provisional) : null;
  if (provisional !== null) {
    let text: string;
    try {
      text = await host.readFile(lp.trial);
    } catch (e) {
      if (!isToolError(e) || e.code !== 'E_FILE_NOT_FOUND') throw e;
      throw new ToolError(
        'E_LEASE_LAPSED',
        `${host.name}: the lease of ${unit} lapsed before version ${provisional} was confirmed: the host restored known-good`,
        {
          hint: 'spectune could not renew it in time (network cut or a pause); run the command again (tune: --resume)',
        },
      );
    }
    const before = await host.readFile(dropInPath(unit)).catch((e) => {
      if (isToolError(e) && e.code === 'E_FILE_NOT_FOUND') return null;
      throw e;
    });
    await installDropIn(host, dropInPath(unit), text, before, o.mode ?? FILE_MODE, lp.trial);
    // good before the provisional marker goes: a lease that lapses in between finds the candidate in /etc and
    // finishes this confirm (current = good = it), never a host on version N with good still the old one
    await host.writeFile(statePaths(unit).good, `${provisional}\n`, { mode: FILE_MODE });
    expectOk(await host.exec(['rm', '-f', '--', lp.provisional], { timeoutMs: 30_000 }));
    if (!o.keepLease) await releaseLease(host, unit);
  }
  const { current } = await readVersions(host, unit);
  const version = current ?? 'none';
  await host.writeFile(statePaths(unit).good, `${version}\n`, { mode: FILE_MODE });
  return version;
}
