// What init and doctor read from a host (read-only): the engine units running there, a unit's start-up time
// from its journal, and its clock. Nothing here changes the host.
import { ToolError } from '../errors.js';
import { normalizeUnitName } from '../unit-name.js';
import { getEngine } from '../engines/index.js';
import type { EngineName } from '../engines/types.js';
import type { Host } from '../host/types.js';
import {
  describeUnitFiles,
  filterEngineLike,
  measureStartups,
  parseDockerPs,
  parseRunningUnits,
  type EngineUnit,
  type StartupReading,
} from '../onboard/index.js';
import { catUnit, readJournalSince } from '../service/systemd.js';

const COMMAND_TIMEOUT_MS = 30_000;
/** A start slower than this is not looked for (the journal window stays bounded on a busy unit). */
const STARTUP_WINDOW_S = 3600;
/** The systemd start line comes just before the main process starts (ExecStartPre= aside). */
const START_LINE_LEAD_S = 5;

/** What discovery saw: engine units, and notes (docker absent or not readable). */
export interface Discovery {
  units: EngineUnit[];
  notes: string[];
}

// Running systemd units (and docker containers, where docker exists) that start an engine.
export async function discoverEngineUnits(
  host: Host,
  opts: { unit?: string; engine?: EngineName } = {},
): Promise<Discovery> {
  const list = await host.exec(
    ['systemctl', 'list-units', '--type=service', '--state=running', '--no-legend', '--plain', '--no-pager'],
    { timeoutMs: COMMAND_TIMEOUT_MS },
  );
  if (list.exitCode !== 0) {
    throw new ToolError(
      'E_REMOTE_COMMAND',
      `${host.name}: systemctl list-units failed: ${list.stderr.trim().split('\n')[0]}`,
      {
        hint: 'spectune finds and tunes systemd units: run init against a host whose PID 1 is systemd',
      },
    );
  }
  const running = parseRunningUnits(list.stdout);
  const notes: string[] = [];
  let names: string[] = [];
  if (running.length) {
    const show = await host.exec(['systemctl', 'show', '-p', 'Id,ExecStart', '--no-pager', '--', ...running], {
      timeoutMs: COMMAND_TIMEOUT_MS,
    });
    names = show.exitCode === 0 ? filterEngineLike(show.stdout) : running;
  }
  const wanted = opts.unit ? normalizeUnitName(opts.unit) : undefined;
  if (wanted && !names.includes(wanted)) names.push(wanted);
  const units: EngineUnit[] = [];
  for (const name of names) {
    // A --unit systemd does not know may be a container's name: chooseUnit says which.
    const files = await catUnit(host, name).catch((e: unknown) => {
      if (name === wanted && !(e instanceof ToolError && e.code === 'E_UNIT_NOT_FOUND')) throw e;
      return null;
    });
    const u = files ? describeUnitFiles(name, files, name === wanted ? opts.engine : undefined) : null;
    if (u) units.push(u);
    else if (files && name === wanted) {
      throw new ToolError(
        'E_INPUT_UNUSABLE',
        `${host.name}: ${name} runs no SGLang, vLLM or llama-server command that spectune can read in its ExecStart`,
        {
          hint: "pass --engine when a variable names the engine binary; a wrapper script's flags cannot be read or patched: put the engine command in ExecStart",
        },
      );
    }
  }
  const docker = await readDocker(host);
  return { units: [...units, ...docker.units], notes: [...notes, ...docker.notes] };
}

// Engine containers from `docker ps`; no docker (or no right to ask it) is a note, not an error.
async function readDocker(host: Host): Promise<Discovery> {
  const r = await host.exec(['docker', 'ps', '--no-trunc', '--format', '{{json .}}'], {
    timeoutMs: COMMAND_TIMEOUT_MS,
  });
  if (r.exitCode === 127 || (r.exitCode !== 0 && /command not found|docker: not found/i.test(r.stderr)))
    return { units: [], notes: [] };
  if (r.exitCode !== 0)
    return { units: [], notes: [`docker ps failed (${r.stderr.trim().split('\n')[0]}): containers not listed`] };
  return { units: parseDockerPs(r.stdout), notes: [] };
}

// Epoch seconds of a systemd timestamp as the host reads it (its own time zone), or null.
async function hostEpoch(host: Host, stamp: string): Promise<number | null> {
  if (!stamp || stamp === 'n/a') return null;
  const r = await host.exec(['date', '-d', stamp, '+%s'], { timeoutMs: COMMAND_TIMEOUT_MS });
  const n = Number(r.stdout.trim());
  return r.exitCode === 0 && Number.isFinite(n) && n > 0 ? n : null;
}

// Start-up times of the unit's current run from its journal (start line → the engine's ready line); null when the
// unit has no main process start to anchor on. Throws E_NO_PERMISSION when the journal is not readable.
export async function readStartup(host: Host, unit: string, engine: EngineName): Promise<StartupReading | null> {
  const r = await host.exec(
    ['systemctl', 'show', '-p', 'ExecMainStartTimestamp', '--value', '--no-pager', '--', unit],
    { timeoutMs: COMMAND_TIMEOUT_MS },
  );
  const start = r.exitCode === 0 ? await hostEpoch(host, r.stdout.trim()) : null;
  if (start === null) return null;
  const entries = await readJournalSince(host, unit, `@${start - START_LINE_LEAD_S}`, `@${start + STARTUP_WINDOW_S}`);
  return measureStartups(entries, getEngine(engine).readyPattern);
}
