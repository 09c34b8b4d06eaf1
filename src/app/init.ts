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
import { assembleGroup, initAddrHost, type FoundRank } from '../onboard/group.js';
import type { Host } from '../host/types.js';
import { showUnit } from '../service/systemd.js';
import { readStartup, discoverEngineUnits } from './onboard-host.js';
import { resolveHostname } from './service-target.js';

/** What `spectune init` was asked to do. */
export interface InitRequest {
  /** ssh destination; undefined = this machine. */
  host?: string;
  /** More ssh destinations: the other ranks of a multi-node group (--host given once per rank). */
  moreHosts?: string[];
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
    throw new ToolError('E_USAGE', `${out} already exists`, {
      hint: 'pass --force to overwrite it, --out FILE for another file, or --dry-run to print the proposal',
    });
  }
  const dir = dirname(resolve(out));
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new ToolError('E_USAGE', `--out ${out}: directory ${dir} does not exist`, {
      hint: 'create it first, or pass --out FILE in an existing directory',
    });
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
    throw new ToolError('E_INPUT_UNUSABLE', `cannot write ${path}: ${(e as Error).message}`, {
      hint: 'pass --out FILE in a writable directory, or --dry-run to print the proposal',
      cause: e,
    });
  }
}

// A unit's rank as init found it (null: the unit runs on one node).
function rankOf(host: string | null, u: EngineUnit): FoundRank | null {
  return u.nodes
    ? {
        host,
        unit: u.unit,
        group: {
          form: 'ranks',
          count: u.nodes.count,
          rank: u.nodes.rank,
          initAddr: u.nodes.initAddr ?? null,
          flags: u.nodes.flags ?? `--nnodes ${u.nodes.count}`,
        },
      }
    : null;
}

// The same group's unit on another host: the unit of that name, else the one engine unit of as many nodes.
function findPeer(units: EngineUnit[], first: EngineUnit): EngineUnit | null {
  const count = first.nodes?.count;
  return (
    units.find((u) => u.unit === first.unit && u.nodes?.count === count) ??
    (units.filter((u) => u.nodes?.count === count).length === 1 ? units.find((u) => u.nodes?.count === count)! : null)
  );
}

// The ssh destination of the init address's host, with the user of the first --host ("root@th1" + 10.0.0.5 → root@10.0.0.5).
function addrDestination(first: string | undefined, addrHost: string): string {
  const user = first?.includes('@') ? first.slice(0, first.indexOf('@') + 1) : '';
  return `${user}${addrHost}`;
}

// Find the other ranks of a multi-node unit: on the other --hosts given, then at the init address (when no --host
// names it; unreachable there is a note, not an error); the hosts opened are kept open for the caller to close.
async function findGroup(
  req: InitRequest,
  first: FoundRank,
  firstUnit: EngineUnit,
  hosts: Map<string | null, Host>,
  notes: string[],
): Promise<FoundRank[]> {
  const others: FoundRank[] = [];
  const probe = async (dest: string, fromAddr: boolean) => {
    let host: Host;
    try {
      host = await openHost({ target: dest, sshConfig: req.sshConfig, sudo: req.sudo });
    } catch (e) {
      if (fromAddr && e instanceof ToolError) {
        notes.push(`the init address host ${dest} was not reachable over ssh (${e.message}): not searched`);
        return;
      }
      throw e;
    }
    hosts.set(dest, host);
    const { units } = await discoverEngineUnits(host, { engine: req.engine }).catch((e: unknown) => {
      if (fromAddr && e instanceof ToolError) return { units: [] as EngineUnit[] };
      throw e;
    });
    const peer = findPeer(units, firstUnit);
    const r = peer ? rankOf(dest, peer) : null;
    if (r) others.push(r);
    else if (!fromAddr)
      notes.push(`${dest}: no engine unit of the same ${first.group.count}-node group (${firstUnit.unit}) runs there`);
  };
  for (const h of req.moreHosts ?? []) await probe(h, false);
  const addr = first.group.initAddr ? initAddrHost(first.group.initAddr) : null;
  const given = [req.host, ...(req.moreHosts ?? [])].map((h) => h?.replace(/^.*@/, ''));
  const found = new Set([first.group.rank, ...others.map((o) => o.group.rank)]);
  if (addr && !found.has(0) && !given.includes(addr) && !['127.0.0.1', 'localhost', '::1'].includes(addr))
    await probe(addrDestination(req.host, addr), true);
  return others;
}

// Run init: discover, choose, measure, propose, write. A unit of a multi-node group brings its other ranks (found
// on the --hosts given or at the init address); a group init cannot complete writes nothing and says which --host to add.
export async function runInit(req: InitRequest): Promise<InitOutcome> {
  assertWritable(req.out, req.force);
  const hosts = new Map<string | null, Host>();
  try {
    const host = await openHost({ target: req.host, sshConfig: req.sshConfig, sudo: req.sudo });
    hosts.set(req.host ?? null, host);
    const { units, notes } = await discoverEngineUnits(host, { unit: req.unit, engine: req.engine });
    const chosen = chooseUnit(units, req.unit, host.name);
    const first = rankOf(req.host ?? null, chosen);
    if (!first && req.moreHosts?.length) {
      throw new ToolError(
        'E_USAGE',
        `--host given ${req.moreHosts.length + 1} times, but ${chosen.unit} on ${host.name} runs on one node (no --nnodes in its command)`,
        { hint: 'pass --host once for a one-node unit; several only for the ranks of a multi-node group' },
      );
    }
    let group: FoundRank[] | undefined;
    if (first) {
      const g = assembleGroup(first, await findGroup(req, first, chosen, hosts, notes));
      if (g.status === 'incomplete') throw new ToolError('E_USAGE', g.message, { hint: g.hint });
      group = g.ranks;
    }
    // The facts of the unit that serves the endpoint: rank0's (the one asked about when it is one node).
    const rank0 = group?.[0] ?? { host: req.host ?? null, unit: chosen.unit };
    const rank0Host = hosts.get(rank0.host)!;
    const unit =
      rank0.host === (req.host ?? null)
        ? chosen
        : ((await discoverEngineUnits(rank0Host, { unit: rank0.unit, engine: req.engine })).units.find(
            (u) => u.unit === rank0.unit,
          ) ?? chosen);
    const state = await showUnit(rank0Host, unit.unit);
    const startup = await readStartup(rank0Host, unit.unit, unit.engine).catch((e: unknown) => {
      if (!(e instanceof ToolError) || e.code !== 'E_NO_PERMISSION') throw e;
      notes.push(`${e.message}: start-up time not measured (\`spectune doctor\` says how to fix it)`);
      return null;
    });
    const facts: InitFacts = {
      host: rank0.host,
      endpointHost: await resolveHostname({ target: rank0.host ?? undefined, sshConfig: req.sshConfig }),
      unit,
      startup,
      timeoutStopMs: state.timeoutStopMs,
      others: units.filter((u) => u !== chosen),
      generatedAt: (req.now ?? new Date()).toISOString().replace(/\.\d+Z$/, 'Z'),
      ...(group ? { group: group.map((r) => ({ host: r.host, unit: r.unit, rank: r.group.rank })) } : {}),
    };
    const proposal = proposeConfig(facts);
    if (req.out) await writeAtomically(req.out, proposal.yaml);
    return { found: units, notes, facts, yaml: proposal.yaml, space: proposal.space, written: req.out };
  } finally {
    await Promise.all([...hosts.values()].map((h) => h.close().catch(() => {})));
  }
}
