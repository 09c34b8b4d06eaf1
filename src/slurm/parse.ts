// Parsers for what Slurm 22.05 prints (pure): `sacct --parsable2` (header + '|'-separated rows), `squeue` with a
// '|'-separated --format, `scontrol show job -o` and `scontrol show config` (key=value), exit codes, hostlists.
import type { SlurmClusterConfig, SlurmExit, SlurmJob, SlurmState } from './types.js';

const STATES: ReadonlySet<string> = new Set([
  'PENDING',
  'CONFIGURING',
  'RUNNING',
  'COMPLETING',
  'SUSPENDED',
  'REQUEUED',
  'RESIZING',
  'COMPLETED',
  'FAILED',
  'CANCELLED',
  'TIMEOUT',
  'OUT_OF_MEMORY',
  'NODE_FAIL',
  'PREEMPTED',
  'BOOT_FAIL',
  'DEADLINE',
]);
/** squeue/scontrol short forms of states. */
const SHORT: Record<string, SlurmState> = {
  PD: 'PENDING',
  R: 'RUNNING',
  CG: 'COMPLETING',
  CF: 'CONFIGURING',
  CD: 'COMPLETED',
  F: 'FAILED',
  CA: 'CANCELLED',
  TO: 'TIMEOUT',
  OOM: 'OUT_OF_MEMORY',
  NF: 'NODE_FAIL',
  PR: 'PREEMPTED',
};

// The state word of "CANCELLED by 0", "RUNNING", "OUT_OF_ME+" (sacct's truncation) or a short form.
export function parseState(text: string): SlurmState {
  const word = text.trim().split(/\s+/)[0]?.replace(/\+$/, '') ?? '';
  if (STATES.has(word)) return word as SlurmState;
  if (SHORT[word]) return SHORT[word];
  const prefix = [...STATES].find((s) => word.length >= 4 && s.startsWith(word));
  return (prefix as SlurmState | undefined) ?? 'UNKNOWN';
}

// "0:9" -> {code 0, signal 9}; null for anything else.
export function parseExit(text: string | undefined): SlurmExit | null {
  const m = /^(\d+):(\d+)$/.exec(text?.trim() ?? '');
  return m ? { code: Number(m[1]), signal: Number(m[2]) } : null;
}

// Expand a Slurm hostlist: "n1", "n[1-3]", "gpu[01-02,05],login" -> names.
export function expandHostlist(text: string): string[] {
  const t = text.trim();
  if (!t || t === 'None assigned' || t === '(null)' || t === 'None') return [];
  const out: string[] = [];
  for (const part of t.match(/[^,[]+(?:\[[^\]]*\])?[^,]*/g) ?? []) {
    const m = /^([^[]*)\[([^\]]*)\](.*)$/.exec(part);
    if (!m) {
      out.push(part);
      continue;
    }
    for (const r of m[2].split(',')) {
      const [a, b] = r.split('-');
      if (b === undefined) {
        out.push(`${m[1]}${a}${m[3]}`);
        continue;
      }
      for (let i = Number(a); i <= Number(b); i++) out.push(`${m[1]}${String(i).padStart(a.length, '0')}${m[3]}`);
    }
  }
  return out;
}

// Rows of `--parsable2` output with a header line, keyed by the header's field names.
export function parseParsable2(text: string): Record<string, string>[] {
  const lines = text
    .split('\n')
    .map((l) => l.replace(/\r$/, ''))
    .filter((l) => l.trim() !== '');
  if (lines.length === 0) return [];
  const head = lines[0].split('|');
  return lines.slice(1).map((l) => {
    const cells = l.split('|');
    return Object.fromEntries(head.map((h, i) => [h, cells[i] ?? '']));
  });
}

/** The sacct fields spectune asks for (`--format`), in this order. */
export const SACCT_FIELDS = ['JobID', 'JobName', 'State', 'ExitCode', 'NodeList', 'Start', 'End'] as const;

// A time field, or null for Unknown/None.
const timeOrNull = (t: string | undefined) => (t && !/^(Unknown|None|)$/.test(t) ? t : null);

// The allocations of `sacct --parsable2 --format=...` output. The allocation row keeps ExitCode 0:0 for a cancelled
// or timed-out job (real 22.05 records, test/fixtures/slurm): the batch step's row carries the signal, so it is used.
export function parseSacct(text: string): SlurmJob[] {
  const rows = parseParsable2(text);
  return rows
    .filter((r) => /^\d+$/.test(r.JobID ?? ''))
    .map((r) => {
      const own = parseExit(r.ExitCode);
      const step = rows.find((x) => x.JobID === `${r.JobID}.batch`);
      const batch = parseExit(step?.ExitCode);
      const exit = own && (own.code !== 0 || own.signal !== 0) ? own : (batch ?? own);
      return {
        jobId: r.JobID,
        name: r.JobName ?? '',
        state: parseState(r.State ?? ''),
        stateText: r.State ?? '',
        exit,
        nodes: expandHostlist(r.NodeList ?? ''),
        reason: null,
        stdout: null,
        start: timeOrNull(r.Start),
        end: timeOrNull(r.End),
        stepEnd: timeOrNull(step?.End),
      };
    });
}

// `scontrol show job -o` (one line per job) or the multi-line form: Key=Value pairs. A value runs to the next " Key=".
export function parseKeyValues(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /(?:^|\s)([A-Za-z][A-Za-z0-9_:/]*)=(.*?)(?=\s+[A-Za-z][A-Za-z0-9_:/]*=|\s*$)/gms;
  for (const m of text.matchAll(re)) if (!(m[1] in out)) out[m[1]] = m[2].trim();
  return out;
}

// One job out of `scontrol show job -o ID`; null when scontrol no longer knows it (after MinJobAge).
export function parseScontrolJob(text: string): SlurmJob | null {
  if (!/JobId=\d+/.test(text)) return null;
  const kv = parseKeyValues(text);
  return {
    jobId: kv.JobId,
    name: kv.JobName ?? '',
    state: parseState(kv.JobState ?? ''),
    stateText: kv.JobState ?? '',
    exit: parseExit(kv.ExitCode),
    nodes: expandHostlist(kv.NodeList ?? ''),
    reason: kv.Reason && kv.Reason !== 'None' ? kv.Reason : null,
    stdout: kv.StdOut ?? null,
    start: timeOrNull(kv.StartTime),
    end: timeOrNull(kv.EndTime),
    stepEnd: null,
  };
}

// `scontrol show config`: "KillWait                = 5 sec" lines.
export function parseScontrolConfig(text: string): SlurmClusterConfig {
  const kv: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^(\w+)\s*=\s*(.*)$/.exec(line.trim());
    if (m) kv[m[1]] = m[2].trim();
  }
  const kill = /^(\d+)/.exec(kv.KillWait ?? '');
  const storage = kv.AccountingStorageType ?? '';
  return {
    killWaitSec: kill ? Number(kill[1]) : 30,
    accounting: storage !== '' && storage !== 'accounting_storage/none',
    clusterName: kv.ClusterName ?? null,
  };
}

/** The squeue fields spectune asks for: id, state, nodes, reason. */
export const SQUEUE_FORMAT = '%i|%T|%N|%r';

// Rows of `squeue --noheader --format=%i|%T|%N|%r`.
export function parseSqueue(
  text: string,
): { jobId: string; state: SlurmState; nodes: string[]; reason: string | null }[] {
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => {
      const [jobId, state, nodes, reason] = l.split('|');
      return {
        jobId: jobId.trim(),
        state: parseState(state ?? ''),
        nodes: expandHostlist(nodes ?? ''),
        reason: reason && reason !== 'None' ? reason.trim() : null,
      };
    });
}

// `sinfo --noheader --format=%n|%t`: nodes and their short state (idle, mix, alloc, drain, down...).
export function parseSinfoNodes(text: string): { node: string; state: string }[] {
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => {
      const [node, state] = l.split('|');
      return { node: node.trim(), state: (state ?? '').trim().replace(/[*~#!%$@^-]+$/, '') };
    });
}
