// The `process` service manager: systemd's service semantics for machines without systemd (and `spectune demo`),
// as an in-process library. Unit definitions persist under <dir>/units, the journal is <dir>/journal.jsonl.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ToolError } from '../errors.js';
import { normalizeUnitName } from '../unit-name.js';
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

// "sim" -> "sim.service" by the one unit-name rule; also refuse a hidden file name in the units directory.
export function toUnitName(name: string): string {
  const unit = normalizeUnitName(name);
  if (unit.startsWith('.')) {
    throw new ToolError('E_UNSAFE_VALUE', `invalid service name ${JSON.stringify(name)}`, {
      hint: 'use letters, digits and :_.@- only',
    });
  }
  return unit;
}

// Check a definition the way systemd would refuse a broken unit file.
export function validateServiceDef(unit: string, def: ServiceDef): void {
  const bad = (what: string): never => {
    throw new ToolError('E_CONFIG_INVALID', `${unit}: ${what}`);
  };
  if (!Array.isArray(def.argv) || def.argv.length === 0 || !def.argv.every((a) => typeof a === 'string'))
    bad('argv must be a non-empty array of strings');
  if (def.argv[0] === '') bad('argv[0] must not be empty');
  if (def.env !== undefined && !Object.values(def.env).every((v) => typeof v === 'string'))
    bad('env values must be strings');
  if (def.restart !== undefined && !['no', 'on-failure', 'always'].includes(def.restart))
    bad(`restart must be no, on-failure or always, got ${def.restart}`);
  for (const k of ['restartSec', 'startLimitBurst', 'startLimitIntervalSec', 'timeoutStopSec'] as const) {
    const v = def[k];
    if (v !== undefined && !(typeof v === 'number' && v >= 0)) bad(`${k} must be a number >= 0, got ${String(v)}`);
  }
}

// Open (or create) a manager directory; existing unit definitions are loaded.
export function createProcessManager(dir: string): ProcessManager {
  return new Manager(dir);
}

class Manager implements ProcessManager {
  readonly dir: string;
  private readonly unitsDir: string;
  private readonly journalFile: ProcJournal;
  private readonly services = new Map<string, ManagedService>();

  constructor(dir: string) {
    this.dir = dir;
    this.unitsDir = join(dir, 'units');
    mkdirSync(this.unitsDir, { recursive: true });
    this.journalFile = new ProcJournal(join(dir, 'journal.jsonl'));
    for (const f of readdirSync(this.unitsDir).filter((n) => n.endsWith('.service.json'))) {
      this.put(
        f.slice(0, -'.json'.length),
        JSON.parse(readFileSync(join(this.unitsDir, f), 'utf8')) as ServiceDef,
        false,
      );
    }
  }

  define(name: string, def: ServiceDef): void {
    this.put(name, def, true);
  }
  async start(name: string): Promise<void> {
    await this.get(name).start();
  }
  async stop(name: string): Promise<void> {
    await this.get(name).stop();
  }
  async restart(name: string): Promise<void> {
    const s = this.get(name);
    await s.stop();
    await s.start();
  }
  resetFailed(name: string): void {
    this.get(name).resetFailed();
  }
  show(name: string): ServiceShow {
    const unit = toUnitName(name);
    return this.services.get(unit)?.show() ?? notFound(unit);
  }
  showText(name: string, properties?: readonly string[]): string {
    return renderShow(this.show(name), properties);
  }
  journal(name: string | null, opts: { afterCursor?: string | null } = {}): JournalPage {
    return this.journalFile.read(name === null ? null : toUnitName(name), opts.afterCursor);
  }
  list(): string[] {
    return [...this.services.keys()].sort();
  }
  async close(): Promise<void> {
    await Promise.all([...this.services.values()].map((s) => s.stop()));
    this.journalFile.close();
  }

  // Validate, persist (unless loading), and create or update the service (applies at its next start).
  private put(name: string, def: ServiceDef, persist: boolean): void {
    const unit = toUnitName(name);
    validateServiceDef(unit, def);
    const path = join(this.unitsDir, `${unit}.json`);
    if (persist) writeFileSync(path, `${JSON.stringify(def, null, 2)}\n`);
    const existing = this.services.get(unit);
    if (existing) existing.def = def;
    else this.services.set(unit, new ManagedService(unit, def, this.journalFile, path));
  }

  private get(name: string): ManagedService {
    const unit = toUnitName(name);
    const s = this.services.get(unit);
    if (!s)
      throw new ToolError('E_UNIT_NOT_FOUND', `Unit ${unit} not found.`, {
        hint: `define it first (ProcessManager.define) under ${this.unitsDir}`,
      });
    return s;
  }
}

// What `systemctl show` says about a unit that does not exist.
function notFound(unit: string): ServiceShow {
  return {
    Id: unit,
    Description: unit,
    LoadState: 'not-found',
    ActiveState: 'inactive',
    SubState: 'dead',
    Result: 'success',
    MainPID: '0',
    ExecMainPID: '0',
    ExecMainCode: '0',
    ExecMainStatus: '0',
    NRestarts: '0',
    Restart: 'no',
    TimeoutStopUSec: '1min 30s',
    InvocationID: '',
    FragmentPath: '',
    DropInPaths: '',
  };
}

// "Key=value" lines in the order asked for (all properties when none are given).
export function renderShow(show: ServiceShow, properties?: readonly string[]): string {
  const keys = properties ?? Object.keys(show);
  const values = show as unknown as Record<string, string>;
  return keys
    .filter((k) => k in values)
    .map((k) => `${k}=${values[k]}\n`)
    .join('');
}
