// The diagnose use case: gather evidence (files, stdin, or live over a Host) and stream it through the diagnoser.
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createDiagnoser, parseActionLog, type Diagnosis } from '../diagnose/index.js';
import type { EngineName } from '../engines/types.js';
import { ToolError } from '../errors.js';
import { expectOk, openHost, type Host } from '../host/index.js';

/** What to diagnose: files (or stdin), or a live unit on a host. */
export interface DiagnoseRequest {
  files: string[];
  stdin?: NodeJS.ReadableStream;
  stateFile?: string;
  actionsFile?: string;
  kernelFile?: string;
  engine?: EngineName;
  unit?: string;
  /** Live mode: ssh destination ("user@host"), or "local"; requires `unit`. */
  host?: string;
  since?: string;
  sshConfig?: string;
}

/** Evidence collected from a live host, ready for diagnoseLogs. */
export interface LiveEvidence {
  inputs: { name: string; content: string }[];
  state: string;
  kernelLines: string;
}

/** Read size for streaming files: 64 KiB strings stay in V8's young generation (1 MiB ones cost an mmap each). */
const CHUNK_BYTES = 1 << 16;
/** Kernel lines worth keeping from `journalctl -k`: OOM killer and NVIDIA driver records. */
const KERNEL_KEEP = /Out of memory|out of memory|oom-kill|oom_reaper|invoked oom-killer|NVRM|Xid/;
/** Time budget of each remote command (journals of busy services take a while to export). */
const LIVE_TIMEOUT_MS = 120_000;

// Read an optional text file with a clear error when missing.
async function readText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new ToolError('E_FILE_NOT_FOUND', `${path}: no such file`);
    throw e;
  }
}

// Stream one readable into the diagnoser under a source name.
async function pump(stream: NodeJS.ReadableStream, name: string, push: (n: string, c: Buffer) => void): Promise<void> {
  try {
    for await (const chunk of stream) push(name, chunk as Buffer);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new ToolError('E_FILE_NOT_FOUND', `${name}: no such file`);
    if ((e as NodeJS.ErrnoException).code === 'EISDIR') throw new ToolError('E_INPUT_UNUSABLE', `${name}: is a directory`);
    throw e;
  }
}

// Collect a unit's journal, its `systemctl show` and the kernel's OOM lines from a host (argv arrays only).
export async function collectLiveEvidence(host: Host, unit: string, since: string): Promise<LiveEvidence> {
  const opts = { timeoutMs: LIVE_TIMEOUT_MS };
  const show = expectOk(await host.exec(['systemctl', 'show', unit, '--no-pager'], opts), `systemctl show ${unit}`).stdout;
  if (/^LoadState=not-found$/m.test(show)) {
    throw new ToolError('E_UNIT_NOT_FOUND', `${host.name}: unit ${unit} not found`, { hint: 'check the unit name with `systemctl list-units`' });
  }
  const journal = expectOk(await host.exec(['journalctl', '-u', unit, '-o', 'json', '--since', since, '--no-pager'], opts), `journalctl -u ${unit}`).stdout;
  const kernel = await host.exec(['journalctl', '-k', '-o', 'json', '--since', since, '--no-pager'], opts);
  const kernelLines = kernel.exitCode === 0 ? kernel.stdout.split('\n').filter((l) => KERNEL_KEEP.test(l)).join('\n') : '';
  return { inputs: [{ name: `${host.name}:${unit}`, content: journal }], state: show, kernelLines };
}

// Diagnose live: open the host, collect, diagnose.
async function diagnoseLive(req: DiagnoseRequest, base: { engine?: EngineName; actions?: ReturnType<typeof parseActionLog>['actions'] }): Promise<Diagnosis> {
  const host = await openHost({ target: req.host, sshConfig: req.sshConfig });
  try {
    const ev = await collectLiveEvidence(host, req.unit!, req.since ?? '10 min ago');
    if (!ev.inputs[0].content.trim()) throw new ToolError('E_INPUT_UNUSABLE', `${host.name}: no journal entries for ${req.unit} since "${req.since ?? '10 min ago'}"`, { hint: 'widen --since' });
    const d = createDiagnoser({ ...base, unit: req.unit, state: ev.state, kernelLines: ev.kernelLines || undefined });
    for (const i of ev.inputs) d.push(i.name, i.content);
    return d.finish();
  } finally {
    await host.close();
  }
}

// Run a diagnosis for the CLI (or any caller): files/stdin streamed in bounded memory, or live mode.
export async function runDiagnose(req: DiagnoseRequest): Promise<Diagnosis> {
  const actions = req.actionsFile ? parseActionLog(await readText(req.actionsFile)).actions : undefined;
  if (req.unit && (req.host || !req.files.length && !req.stdin)) return diagnoseLive(req, { engine: req.engine, actions });
  const d = createDiagnoser({
    engine: req.engine, unit: req.unit, actions,
    state: req.stateFile ? await readText(req.stateFile) : undefined,
    kernelLines: req.kernelFile ? await readText(req.kernelFile) : undefined,
  });
  const push = (n: string, c: Buffer) => d.push(n, c);
  for (const f of req.files) {
    if (f === '-') { if (req.stdin) await pump(req.stdin, 'stdin', push); continue; }
    await pump(createReadStream(f, { highWaterMark: CHUNK_BYTES }), f, push);
  }
  if (!req.files.length && req.stdin) await pump(req.stdin, 'stdin', push);
  return d.finish();
}
