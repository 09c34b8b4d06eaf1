// Pure parsing of `systemctl show -p ...` output into the state spectune decides on.
import { parseSystemctlShow } from '../diagnose/index.js';

/** Properties spectune asks `systemctl show` for (one round trip per poll). */
export const SHOW_PROPERTIES = [
  'Id',
  'LoadState',
  'ActiveState',
  'SubState',
  'Result',
  'MainPID',
  'NRestarts',
  'TimeoutStopUSec',
  'Restart',
  'ExecMainStatus',
  'ExecMainCode',
  'FragmentPath',
  'DropInPaths',
  'InvocationID',
] as const;

/** The unit state spectune acts on. */
export interface UnitState {
  id: string;
  loadState: string;
  activeState: string;
  subState: string;
  result: string;
  mainPid: number | null;
  nRestarts: number | null;
  /** TimeoutStopSec in milliseconds (Infinity when "infinity"); null when unknown. */
  timeoutStopMs: number | null;
  restart: string;
  execMainStatus: number | null;
  fragmentPath: string;
  dropInPaths: string[];
  invocationId: string;
  /** The `systemctl show` text itself (evidence for diagnosis). */
  raw: string;
}

// A positive integer or null (systemd prints 0 for "no PID", "[not set]" for unknown counters).
function intOrNull(v: string | undefined, zeroIsNull: boolean): number | null {
  if (v === undefined || !/^\d+$/.test(v)) return null;
  const n = Number(v);
  return zeroIsNull && n === 0 ? null : n;
}

// Parse `systemctl show` output into a UnitState.
export function parseUnitState(text: string): UnitState {
  const kv = parseSystemctlShow(text).properties;
  return {
    id: kv.Id ?? '',
    loadState: kv.LoadState ?? '',
    activeState: kv.ActiveState ?? '',
    subState: kv.SubState ?? '',
    result: kv.Result ?? '',
    mainPid: intOrNull(kv.MainPID, true),
    nRestarts: intOrNull(kv.NRestarts, false),
    timeoutStopMs: kv.TimeoutStopUSec === undefined ? null : parseTimespanMs(kv.TimeoutStopUSec),
    restart: kv.Restart ?? '',
    execMainStatus: intOrNull(kv.ExecMainStatus, false),
    fragmentPath: kv.FragmentPath ?? '',
    dropInPaths: (kv.DropInPaths ?? '').split(/\s+/).filter(Boolean),
    invocationId: kv.InvocationID ?? '',
    raw: text,
  };
}

/** Milliseconds per systemd time unit (systemd.time(7)). */
const TIMESPAN_UNITS: Record<string, number> = {
  us: 0.001,
  usec: 0.001,
  ms: 1,
  msec: 1,
  s: 1000,
  sec: 1000,
  second: 1000,
  seconds: 1000,
  m: 60_000,
  min: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hr: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
  w: 604_800_000,
  week: 604_800_000,
  weeks: 604_800_000,
};

// Parse a systemd timespan ("1min 30s", "90", "500ms", "infinity") into milliseconds; a bare number is seconds.
export function parseTimespanMs(text: string): number | null {
  const t = text.trim();
  if (t === 'infinity') return Infinity;
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t) * 1000;
  let total = 0;
  const re = /(\d+(?:\.\d+)?)\s*([a-z]+)/g;
  let consumed = '';
  for (let m = re.exec(t); m; m = re.exec(t)) {
    const unit = TIMESPAN_UNITS[m[2]];
    if (unit === undefined) return null;
    total += Number(m[1]) * unit;
    consumed += m[0];
  }
  return consumed.replace(/\s/g, '') === t.replace(/\s/g, '') && consumed ? total : null;
}

// Whether the unit is still on its way up or up (anything else means the start failed).
export function isStartingOrUp(s: UnitState): boolean {
  return (
    (s.activeState === 'activating' || s.activeState === 'active' || s.activeState === 'reloading') &&
    s.subState !== 'auto-restart'
  );
}
