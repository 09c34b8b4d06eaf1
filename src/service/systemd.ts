// systemctl and journalctl through a Host: argv arrays only, every unit name validated before use.
import { ToolError } from '../errors.js';
import { expectOk } from '../host/command-result.js';
import type { Host } from '../host/types.js';
import { parseJournalJson, type JournalEntry } from './journal.js';
import { SHOW_PROPERTIES, parseUnitState, type UnitState } from './show.js';
import { normalizeUnitName, splitCatOutput, type UnitFile } from './unit.js';

/** systemctl/journalctl answer in milliseconds; 30 s means the host or its systemd is stuck. */
const COMMAND_TIMEOUT_MS = 30_000;
/** A stop may wait for the whole TimeoutStopSec (default 90 s) plus the SIGKILL; allow generously more. */
const STOP_COMMAND_TIMEOUT_MS = 15 * 60_000;
/** Journal records read per poll at most (a crash-looping Python traceback is a few hundred lines). */
const JOURNAL_BATCH = 5000;

/** systemctl verbs spectune uses on a unit. */
export type UnitVerb = 'start' | 'stop' | 'restart' | 'reset-failed';

// The unit's state (one `systemctl show` round trip); a unit systemd does not know is an error.
export async function showUnit(host: Host, unit: string): Promise<UnitState> {
  const name = normalizeUnitName(unit);
  const r = expectOk(
    await host.exec(['systemctl', 'show', name, '-p', SHOW_PROPERTIES.join(','), '--no-pager'], {
      timeoutMs: COMMAND_TIMEOUT_MS,
    }),
  );
  const state = parseUnitState(r.stdout);
  if (state.loadState === 'not-found' || state.loadState === '') {
    throw new ToolError('E_UNIT_NOT_FOUND', `${host.name}: unit ${name} not found`, {
      hint: 'check the name with `systemctl list-units --type=service` on that host',
    });
  }
  return state;
}

// The unit file and its drop-ins as systemd sees them.
export async function catUnit(host: Host, unit: string): Promise<UnitFile[]> {
  const name = normalizeUnitName(unit);
  const r = await host.exec(['systemctl', 'cat', '--no-pager', name], { timeoutMs: COMMAND_TIMEOUT_MS });
  if (r.exitCode !== 0 && /no files found|not found|does not exist/i.test(r.stderr)) {
    throw new ToolError('E_UNIT_NOT_FOUND', `${host.name}: unit ${name} not found`, {
      hint: 'check the name with `systemctl list-units --type=service` on that host',
    });
  }
  const files = splitCatOutput(expectOk(r).stdout);
  if (!files.length) throw new ToolError('E_UNIT_NOT_FOUND', `${host.name}: unit ${name} has no unit file`);
  return files;
}

// Run one systemctl verb on the unit.
export async function controlUnit(host: Host, verb: UnitVerb, unit: string): Promise<void> {
  const name = normalizeUnitName(unit);
  const timeoutMs = verb === 'reset-failed' ? COMMAND_TIMEOUT_MS : STOP_COMMAND_TIMEOUT_MS;
  const r = await host.exec(['systemctl', verb, name], { timeoutMs });
  // A stopped unit nothing refers to is unloaded at once: then there is no failed state left to reset.
  if (verb === 'reset-failed' && r.exitCode !== 0 && /not loaded/i.test(r.stderr)) return;
  expectOk(r);
}

// Make systemd re-read unit files and drop-ins.
export async function reloadDaemon(host: Host): Promise<void> {
  expectOk(await host.exec(['systemctl', 'daemon-reload'], { timeoutMs: COMMAND_TIMEOUT_MS }));
}

/** journalctl's notice when the user may not read the system journal (it then shows nothing, with exit 0). */
const JOURNAL_DENIED = /not seeing messages from other users and the system|insufficient permissions/i;

// Run journalctl, turning "not allowed to read the system journal" into E_NO_PERMISSION. With -u journalctl
// says nothing about it, so an empty answer is checked once more without a filter when `checkEmpty` is set.
async function runJournalctl(host: Host, argv: string[], checkEmpty = false): Promise<string> {
  const r = expectOk(await host.exec(argv, { timeoutMs: COMMAND_TIMEOUT_MS }));
  let denied = JOURNAL_DENIED.test(r.stderr);
  if (!denied && checkEmpty && r.stdout.trim() === '') {
    const probe = await host.exec(['journalctl', '-n', '0', '--no-pager'], { timeoutMs: COMMAND_TIMEOUT_MS });
    denied = JOURNAL_DENIED.test(probe.stdout + probe.stderr);
  }
  if (denied) {
    throw new ToolError('E_NO_PERMISSION', `${host.name}: not allowed to read the system journal`, {
      hint: "connect as root, or add the ssh user to the 'systemd-journal' group",
    });
  }
  return r.stdout;
}

// The journal cursor of the unit's newest record (null when the unit has no records yet).
export async function lastJournalCursor(host: Host, unit: string): Promise<string | null> {
  const name = normalizeUnitName(unit);
  return (
    parseJournalJson(
      await runJournalctl(host, ['journalctl', '-u', name, '-n', '1', '-o', 'json', '--no-pager'], true),
    ).pop()?.cursor || null
  );
}

// The unit's journal records after a cursor (from the beginning of its journal when the cursor is null).
export async function readJournalAfter(host: Host, unit: string, cursor: string | null): Promise<JournalEntry[]> {
  const name = normalizeUnitName(unit);
  const where = cursor ? [`--after-cursor=${cursor}`] : ['-n', String(JOURNAL_BATCH)];
  return parseJournalJson(await runJournalctl(host, ['journalctl', '-u', name, '-o', 'json', '--no-pager', ...where]));
}

// The unit's journal since a time, as JSON records (for `spectune logs` and diagnosis).
export async function readJournalSince(
  host: Host,
  unit: string,
  since: string,
  until?: string,
): Promise<JournalEntry[]> {
  const name = normalizeUnitName(unit);
  const argv = [
    'journalctl',
    '-u',
    name,
    '-o',
    'json',
    '--no-pager',
    `--since=${since}`,
    ...(until ? [`--until=${until}`] : []),
  ];
  return parseJournalJson(await runJournalctl(host, argv, true));
}

// Kernel messages since a time (OOM killer, NVRM Xid) as journal entries (kernel transport, time with its year);
// none when the kernel log is not readable.
export async function readKernelLog(host: Host, since: string): Promise<JournalEntry[]> {
  const r = await host.exec(['journalctl', '-k', '-o', 'json', '--no-pager', `--since=${since}`], {
    timeoutMs: COMMAND_TIMEOUT_MS,
  });
  return r.exitCode === 0 ? parseJournalJson(r.stdout) : [];
}

// The service host's clock minus this machine's (ms), so that journal times compare with local times; 0 if unknown.
export async function measureClockOffsetMs(host: Host): Promise<number> {
  return (await readClockOffsetMs(host)) ?? 0;
}

// The host's clock minus this machine's (ms), or null when `date` fails (doctor reports it as unknown).
export async function readClockOffsetMs(host: Host): Promise<number | null> {
  const before = Date.now();
  const r = await host.exec(['date', '+%s%3N'], { timeoutMs: COMMAND_TIMEOUT_MS });
  const hostMs = Number(r.stdout.trim());
  if (r.exitCode !== 0 || !Number.isFinite(hostMs) || hostMs <= 0) return null;
  return Math.round(hostMs - (before + Date.now()) / 2);
}
