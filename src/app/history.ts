// `spectune history`: the kept drop-in versions of a unit (what `rollback --to N` accepts), read-only.
import type { EventSink } from '../tune/events.js';
import type { Host } from '../host/types.js';
import { listVersions, readVersions, type Version } from '../service/deploy.js';
import { flagLines } from '../service/plan.js';
import { unifiedDiff } from '../service/diff.js';
import { catUnit } from '../service/systemd.js';
import { parseDropIn, statePaths, versionPath } from '../service/unit.js';
import { summarizeExecDiff, viewUnit } from '../service/unit-view.js';
import { openService, type ServiceTarget } from './service-target.js';

/** One kept version. */
export interface KeptVersion {
  version: number;
  /** When it was written (the host's clock, ISO), null when unknown. */
  date: string | null;
  current: boolean;
  good: boolean;
  /** Its drop-in text is the one in force now. */
  inForce: boolean;
  /** What it changes against the operator's unit, as a short flag diff. */
  changes: string;
  rollback: string;
}

/** The history of one rank's unit. */
export interface UnitHistory {
  rank: number;
  host: string;
  unit: string;
  current: Version | null;
  good: Version | null;
  versions: KeptVersion[];
  none: string;
}

// The modification times (epoch s) of the kept version files, by number.
async function readDates(host: Host, unit: string): Promise<Map<number, string>> {
  const r = await host.exec(
    ['find', statePaths(unit).versionsDir, '-maxdepth', '1', '-name', '*.conf', '-printf', '%f %T@\\n'],
    { timeoutMs: 30_000 },
  );
  const dates = new Map<number, string>();
  if (r.exitCode !== 0) return dates;
  for (const line of r.stdout.split('\n')) {
    const m = /^(\d+)\.conf (\d+)/.exec(line.trim());
    if (m) dates.set(Number(m[1]), new Date(Number(m[2]) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z'));
  }
  return dates;
}

// Pure: a kept version's short diff against the operator's own ExecStart.
export function describeVersion(operatorExecStart: string | null, dropInText: string): string {
  const exec = parseDropIn({ path: 'kept', text: dropInText }).execStart;
  return summarizeExecDiff(
    unifiedDiff(flagLines(operatorExecStart ?? ''), flagLines(exec), { from: 'operator', to: 'kept' }),
  );
}

// The exact rollback line of a version of one rank's unit (named by --host/--unit, so it works for any rank).
export function rollbackLine(rank: { target: string | undefined; unit: string }, v: Version): string {
  return `spectune rollback${rank.target ? ` --host ${rank.target}` : ''} --unit ${rank.unit} --to ${v}`;
}

// Read the kept versions of every rank of the target.
export async function readHistory(target: ServiceTarget, onEvent: EventSink): Promise<UnitHistory[]> {
  const svc = await openService(target, onEvent, { dryRun: true });
  try {
    return await Promise.all(
      svc.group.ranks.map(async (c, i) => {
        const rank = target.ranks[i].rank;
        const [files, marks, nums, dates] = await Promise.all([
          catUnit(c.host, c.unit),
          readVersions(c.host, c.unit),
          listVersions(c.host, c.unit),
          readDates(c.host, c.unit),
        ]);
        const view = viewUnit(files);
        const inForceText = view.spectunePath ? (files.find((f) => f.path === view.spectunePath)?.text ?? null) : null;
        const versions = await Promise.all(
          nums.map(async (n) => {
            const text = await c.host.readFile(versionPath(c.unit, n));
            return {
              version: n,
              date: dates.get(n) ?? null,
              current: marks.current === n,
              good: marks.good === n,
              inForce: inForceText === text,
              changes: describeVersion(view.operatorExecStart, text),
              rollback: rollbackLine(target.ranks[i], n),
            };
          }),
        );
        return {
          rank,
          host: c.host.name,
          unit: c.unit,
          current: marks.current,
          good: marks.good,
          versions,
          none: rollbackLine(target.ranks[i], 'none'),
        };
      }),
    );
  } finally {
    await svc.close();
  }
}
