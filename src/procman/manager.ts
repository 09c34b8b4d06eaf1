// The `process` service manager: systemd's service semantics for machines without systemd (and `spectune demo`),
// as an in-process library. Unit definitions persist under <dir>/units, the journal is <dir>/journal.jsonl.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ToolError } from '../errors.js';
import { ProcJournal } from './journal.js';
import { ManagedService } from './service.js';
import type { JournalPage, ServiceDef, ServiceShow } from './types.js';

/** A running manager; services run as detached child processes for as long as it lives (close() stops them). */
export interface ProcessManager {
  readonly dir: string;
  /** Create or replace a service definition (like writing a unit file + daemon-reload); applies at next start. */
  define(name: string, def: ServiceDef): void;
  start(name: string): Promise<void>;
  stop(name: string): Promise<void>;
  restart(name: string): Promise<void>;
  resetFailed(name: string): void;
  /** Like `systemctl show`; an unknown unit has LoadState=not-found. */
  show(name: string): ServiceShow;
  /** `systemctl show` text ("Key=value" lines), for code that parses real systemctl output. */
  showText(name: string, properties?: readonly string[]): string;
  /** Like `journalctl -u UNIT -o json` (null = all units), optionally only entries after a cursor. */
  journal(name: string | null, opts?: { afterCursor?: string | null }): JournalPage;
  /** Unit names defined. */
  list(): string[];
  /** Stop every service and close the journal. */
  close(): Promise<void>;
}

// "sim" -> "sim.service"; refuse names that could escape the units directory.
export function toUnitName(name: string): string {
  const unit = name.endsWith('.service') ? name : `${name}.service`;
  if (!/^[A-Za-z0-9:_.@-]+\.service$/.test(unit) || unit.startsWith('.')) {
    throw new ToolError('E_UNSAFE_VALUE', `invalid service name ${JSON.stringify(name)}`, { hint: 'use letters, digits and :_.@- only' });
  }
  return unit;
}

// Check a definition the way systemd would refuse a broken unit file.
export function validateServiceDef(unit: string, def: ServiceDef): void {
  const bad = (what: string): never => { throw new ToolError('E_CONFIG_INVALID', `${unit}: ${what}`); };
  if (!Array.isArray(def.argv) || def.argv.length === 0 || !def.argv.every((a) => typeof a === 'string')) bad('argv must be a non-empty array of strings');
  if (def.argv[0] === '') bad('argv[0] must not be empty');
  if (def.restart !== undefined && !['no', 'on-failure', 'always'].includes(def.restart)) bad(`restart must be no, on-failure or always, got ${def.restart}`);
  for (const k of ['restartSec', 'startLimitBurst', 'startLimitIntervalSec', 'timeoutStopSec'] as const) {
    const v = def[k];
    if (v !== undefined && !(typeof v === 'number' && v >= 0)) bad(`${k} must be a number >= 0, got ${String(v)}`);
  }
}

// Open (or create) a manager directory; existing unit definitions are loaded.
export function createProcessManager(dir: string): ProcessManager {
  const unitsDir = join(dir, 'units');
  mkdirSync(unitsDir, { recursive: true });
  const journal = new ProcJournal(join(dir, 'journal.jsonl'));
  const services = new Map<string, ManagedService>();
  const define = (name: string, def: ServiceDef, persist = true): void => {
    const unit = toUnitName(name);
    validateServiceDef(unit, def);
    const path = join(unitsDir, `${unit}.json`);
    if (persist) writeFileSync(path, `${JSON.stringify(def, null, 2)}\n`);
    const existing = services.get(unit);
    if (existing) existing.def = def; else services.set(unit, new ManagedService(unit, def, journal, path));
  };
  for (const f of readdirSync(unitsDir).filter((n) => n.endsWith('.service.json'))) {
    define(f.slice(0, -'.json'.length), JSON.parse(readFileSync(join(unitsDir, f), 'utf8')) as ServiceDef, false);
  }
  const get = (name: string): ManagedService => {
    const unit = toUnitName(name);
    const s = services.get(unit);
    if (!s) throw new ToolError('E_UNIT_NOT_FOUND', `Unit ${unit} not found.`, { hint: `define it first (procman define) under ${unitsDir}` });
    return s;
  };
  return {
    dir,
    define: (name, def) => define(name, def),
    start: async (name) => get(name).start(),
    stop: async (name) => get(name).stop(),
    restart: async (name) => { const s = get(name); await s.stop(); await s.start(); },
    resetFailed: (name) => get(name).resetFailed(),
    show: (name) => (services.has(toUnitName(name)) ? get(name).show() : notFound(toUnitName(name))),
    showText: (name, properties) => renderShow(services.has(toUnitName(name)) ? get(name).show() : notFound(toUnitName(name)), properties),
    journal: (name, opts = {}) => journal.read(name === null ? null : toUnitName(name), opts.afterCursor),
    list: () => [...services.keys()].sort(),
    close: async () => {
      await Promise.all([...services.values()].map((s) => s.stop()));
      journal.close();
    },
  };
}

// What `systemctl show` says about a unit that does not exist.
function notFound(unit: string): ServiceShow {
  return {
    Id: unit, Description: unit, LoadState: 'not-found', ActiveState: 'inactive', SubState: 'dead', Result: 'success',
    MainPID: '0', ExecMainPID: '0', ExecMainCode: '0', ExecMainStatus: '0', NRestarts: '0', Restart: 'no',
    TimeoutStopUSec: '1min 30s', InvocationID: '', FragmentPath: '', DropInPaths: '',
  };
}

// "Key=value" lines in the order asked for (all properties when none are given).
export function renderShow(show: ServiceShow, properties?: readonly string[]): string {
  const keys = properties ?? Object.keys(show);
  const values = show as unknown as Record<string, string>;
  return keys.filter((k) => k in values).map((k) => `${k}=${values[k]}\n`).join('');
}
