// The public entry points: a streaming diagnoser (bounded memory) and a one-shot diagnoseLogs over strings/buffers.
import type { EngineName } from '../engines/types.js';
import { Collector } from './collector.js';
import { evaluate } from './evaluate.js';
import { matcherForAll, RuleMatcher } from './matcher.js';
import { rulesForEngine } from './rules/index.js';
import type { JournalEntry } from './records.js';
import { parseSystemctlShow, type ServiceState } from './state.js';
import type { ActionRecord, Diagnosis } from './types.js';

/** Source name under which kernel lines (journalctl -k) are read. */
export const KERNEL_SOURCE = 'kernel';

/** Options shared by the streaming and the one-shot API. */
export interface DiagnoseOptions {
  /** `systemctl show UNIT` output. */
  state?: string;
  actions?: ActionRecord[];
  /** Restrict rules to one engine's dialect (default: detect per lifetime). */
  engine?: EngineName;
  /** Unit name: systemd lines about other units are ignored, kernel cgroup paths are matched against it. */
  unit?: string;
  /** Kernel log lines (journalctl -k), for OOM-killer and NVRM Xid records. */
  kernelLines?: string;
  /** Judge the last lifetime of the first input (live diagnose of a unit), not the latest failure in the window. */
  lastLifetime?: boolean;
}

/** Streaming diagnoser: push chunks of any size (or journal entries read already) from any number of sources, then finish(). */
export interface Diagnoser {
  push(source: string, chunk: Buffer | string): void;
  /** Entries of the journal model (from journal JSON, or text parsed by parseLine): their fields are used as read. */
  pushEntries(source: string, entries: readonly JournalEntry[]): void;
  finish(): Diagnosis;
}

/** One input of diagnoseLogs: text (any format: journal JSON, journalctl text, plain output) or journal entries. */
export type DiagnoseInput =
  | { name: string; content: string | Buffer }
  | { name: string; entries: readonly JournalEntry[] };

// Create a streaming diagnoser; memory stays bounded whatever the input size.
export function createDiagnoser(opts: DiagnoseOptions = {}): Diagnoser {
  const matcher = opts.engine ? new RuleMatcher(rulesForEngine(opts.engine)) : matcherForAll();
  const collector = new Collector(matcher, opts.unit ?? null);
  let kernelSeen = false;
  return {
    push(source, chunk) {
      if (source === KERNEL_SOURCE) kernelSeen = true;
      collector.push(source, chunk);
    },
    pushEntries(source, entries) {
      if (source === KERNEL_SOURCE) kernelSeen = true;
      collector.pushEntries(source, entries);
    },
    finish() {
      if (opts.kernelLines) {
        kernelSeen = true;
        collector.push(KERNEL_SOURCE, opts.kernelLines);
      }
      const collected = collector.finish();
      const state: ServiceState | null = opts.state ? parseSystemctlShow(opts.state) : null;
      const kernelInInput = collected.sources.some((s) => s.kernelLines > 0);
      return evaluate(collected, {
        state,
        actions: opts.actions ?? [],
        unit: opts.unit ?? null,
        kernelChecked: kernelSeen || kernelInInput,
        lastLifetime: opts.lastLifetime,
      });
    },
  };
}

// Diagnose complete inputs (one per node; text or entries); pure: no I/O, no clock.
export function diagnoseLogs(inputs: DiagnoseInput[], opts: DiagnoseOptions = {}): Diagnosis {
  const d = createDiagnoser(opts);
  for (const i of inputs) {
    if ('entries' in i) d.pushEntries(i.name, i.entries);
    else d.push(i.name, i.content);
  }
  return d.finish();
}
