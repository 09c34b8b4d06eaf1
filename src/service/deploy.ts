// Performing a DeployPlan on a host: keep the version, install the drop-in atomically, daemon-reload; and the
// version history behind rollback (numbered copies plus `current` and `good` markers). Never touches the unit file.
import { ToolError, isToolError } from '../errors.js';
import { expectOk } from '../host/command-result.js';
import type { Host } from '../host/types.js';
import type { ServiceEventSink } from './events.js';
import type { DeployPlan } from './plan.js';
import { reloadDaemon } from './systemd.js';
import { dropInPath, statePaths, versionPath } from './unit.js';

/** A version of spectune's drop-in: a number in the history, or "none" (no drop-in: the operator's unit alone). */
export type Version = number | 'none';

/** What a rollback returns to, in words: 'none' is the unit's own config, never "known-good version none". */
export function describeRollbackTarget(v: Version): string {
  return v === 'none' ? "the unit's own config (no spectune drop-in)" : `known-good version ${v}`;
}

/** Drop-ins and markers are world-readable like the unit files systemd reads next to them. */
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
export async function readVersions(host: Host, unit: string): Promise<{ current: Version | null; good: Version | null }> {
  const st = statePaths(unit);
  return { current: await readMarker(host, st.current), good: await readMarker(host, st.good) };
}

// The kept version numbers, ascending (empty when there is no history yet).
export async function listVersions(host: Host, unit: string): Promise<number[]> {
  const r = await host.exec(['ls', '-1', '--', statePaths(unit).versionsDir], { timeoutMs: 30_000 });
  if (r.exitCode !== 0) return [];
  return r.stdout.split('\n').map((l) => /^(\d+)\.conf$/.exec(l.trim())?.[1]).filter(Boolean).map(Number).sort((a, b) => a - b);
}

// The next free version number (1 when there is no history yet).
async function nextVersion(host: Host, unit: string): Promise<number> {
  const nums = await listVersions(host, unit);
  return nums.length ? nums[nums.length - 1] + 1 : 1;
}

// Before the first deploy, remember what runs now as the known-good baseline (the operator's own config);
// returns the version deployed now.
async function recordBaseline(host: Host, plan: DeployPlan): Promise<Version> {
  const st = statePaths(plan.unit);
  const { current, good } = await readVersions(host, plan.unit);
  if (good !== null) return current ?? 'none';
  let baseline: Version = current ?? 'none';
  if (current === null && plan.previousDropIn !== null) {
    baseline = await nextVersion(host, plan.unit);
    await host.writeFile(versionPath(plan.unit, baseline), plan.previousDropIn, { mode: FILE_MODE });
  }
  await host.writeFile(st.good, `${baseline}\n`, { mode: FILE_MODE });
  if (current === null) await host.writeFile(st.current, `${baseline}\n`, { mode: FILE_MODE });
  return current ?? baseline;
}

// Install a drop-in text (or remove the drop-in) and daemon-reload; on a failed reload put the old one back.
async function installDropIn(host: Host, unit: string, text: string | null, previous: string | null): Promise<void> {
  await writeOrRemove(host, dropInPath(unit), text);
  try {
    await reloadDaemon(host);
  } catch (e) {
    await writeOrRemove(host, dropInPath(unit), previous).catch(() => {});
    await reloadDaemon(host).catch(() => {});
    throw e;
  }
}

// Write a file atomically, or remove it when text is null.
async function writeOrRemove(host: Host, path: string, text: string | null): Promise<void> {
  if (text !== null) await host.writeFile(path, text, { mode: FILE_MODE });
  else expectOk(await host.exec(['rm', '-f', '--', path], { timeoutMs: 30_000 }));
}

// Perform a plan up to daemon-reload (the restart is the controller's, after the drain check); returns the new
// version and the one it replaced (to put back if the restart cannot even be issued).
export async function applyDeploy(plan: DeployPlan, host: Host, onEvent: ServiceEventSink): Promise<{ version: number; previous: Version }> {
  const previous = await recordBaseline(host, plan);
  const version = await nextVersion(host, plan.unit);
  await host.writeFile(versionPath(plan.unit, version), plan.dropInText, { mode: FILE_MODE });
  await installDropIn(host, plan.unit, plan.dropInText, plan.previousDropIn);
  await host.writeFile(statePaths(plan.unit).current, `${version}\n`, { mode: FILE_MODE });
  onEvent({ type: 'log', ts: Date.now(), level: 'info', message: `${plan.unit}: drop-in version ${version} installed at ${host.whereIs?.(plan.dropInPath) ?? plan.dropInPath}, ${host.whereIs ? 'units reloaded' : 'systemd reloaded'}` });
  return { version, previous };
}

// Put back a kept version (or none), then daemon-reload.
export async function restoreVersion(host: Host, unit: string, version: Version, currentText: string | null): Promise<void> {
  let text: string | null = null;
  if (version !== 'none') {
    try {
      text = await host.readFile(versionPath(unit, version));
    } catch (e) {
      if (isToolError(e) && e.code === 'E_FILE_NOT_FOUND') {
        throw new ToolError('E_ROLLBACK_FAILED', `${host.name}: known-good version ${version} of ${unit} is missing from ${statePaths(unit).versionsDir}`);
      }
      throw e;
    }
  }
  await installDropIn(host, unit, text, currentText);
  await host.writeFile(statePaths(unit).current, `${version}\n`, { mode: FILE_MODE });
}

// Mark the deployed version as the last known-good one.
export async function markVersionGood(host: Host, unit: string): Promise<Version> {
  const { current } = await readVersions(host, unit);
  const version = current ?? 'none';
  await host.writeFile(statePaths(unit).good, `${version}\n`, { mode: FILE_MODE });
  return version;
}
