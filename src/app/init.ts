// `spectune init --host H`: find the engine units running on a host, read what the chosen one runs and how long it
// takes to start, and write a commented spectune.yaml proposing a search. Reads the host only; writes one local
// file (never over an existing one unless forced; a dry run writes nothing).
import { existsSync, statSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { ToolError } from '../errors.js';
import type { EngineName } from '../engines/types.js';
import { openHost } from '../host/open.js';
import { chooseUnit, proposeConfig, type EngineUnit, type InitFacts } from '../onboard/index.js';
import { showUnit } from '../service/systemd.js';
import { readStartup, discoverEngineUnits } from './onboard-host.js';
import { resolveHostname } from './service-target.js';

/** What `spectune init` was asked to do. */
export interface InitRequest {
  /** ssh destination; undefined = this machine. */
  host?: string;
  sshConfig?: string;
  sudo?: boolean;
  unit?: string;
  /** Engine to assume when ExecStart runs it through a variable binary. */
  engine?: EngineName;
  /** Where to write; null = print only (dry run). */
  out: string | null;
  force: boolean;
  now?: Date;
}

/** What init found and proposed. */
export interface InitOutcome {
  found: EngineUnit[];
  notes: string[];
  facts: InitFacts;
  yaml: string;
  space: string[];
  /** The file written, or null for a dry run. */
  written: string | null;
}

// Refuse to overwrite a config unless forced, or to write where no file can go (checked before the host is read).
function assertWritable(out: string | null, force: boolean): void {
  if (!out) return;
  if (existsSync(out) && !force) {
    throw new ToolError('E_USAGE', `${out} already exists`, { hint: 'pass --force to overwrite it, --out FILE for another file, or --dry-run to print the proposal' });
  }
  const dir = dirname(resolve(out));
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new ToolError('E_USAGE', `--out ${out}: directory ${dir} does not exist`, { hint: 'create it first, or pass --out FILE in an existing directory' });
  }
}

// Write the file atomically (temp file + rename), so an interrupted init leaves the old file or the new one.
async function writeAtomically(path: string, text: string): Promise<void> {
  const tmp = `${path}.spectune-init-${process.pid}`;
  try {
    await writeFile(tmp, text, { mode: 0o644 });
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    throw new ToolError('E_INPUT_UNUSABLE', `cannot write ${path}: ${(e as Error).message}`, { hint: 'pass --out FILE in a writable directory, or --dry-run to print the proposal', cause: e });
  }
}

// Run init: discover, choose, measure, propose, write.
export async function runInit(req: InitRequest): Promise<InitOutcome> {
  assertWritable(req.out, req.force);
  const host = await openHost({ target: req.host, sshConfig: req.sshConfig, sudo: req.sudo });
  try {
    const { units, notes } = await discoverEngineUnits(host, { unit: req.unit, engine: req.engine });
    const unit = chooseUnit(units, req.unit, host.name);
    const state = await showUnit(host, unit.unit);
    const startup = await readStartup(host, unit.unit, unit.engine).catch((e: unknown) => {
      if (!(e instanceof ToolError) || e.code !== 'E_NO_PERMISSION') throw e;
      notes.push(`${e.message}: start-up time not measured (\`spectune doctor\` says how to fix it)`);
      return null;
    });
    const facts: InitFacts = {
      host: req.host ?? null,
      endpointHost: await resolveHostname({ target: req.host, sshConfig: req.sshConfig }),
      unit, startup, timeoutStopMs: state.timeoutStopMs,
      others: units.filter((u) => u !== unit),
      generatedAt: (req.now ?? new Date()).toISOString().replace(/\.\d+Z$/, 'Z'),
    };
    const proposal = proposeConfig(facts);
    if (req.out) await writeAtomically(req.out, proposal.yaml);
    return { found: units, notes, facts, yaml: proposal.yaml, space: proposal.space, written: req.out };
  } finally {
    await host.close();
  }
}
