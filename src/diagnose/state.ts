// Parse `systemctl show UNIT` output into the properties diagnose weighs (Result, ExecMain*, NRestarts...).
import type { ActionRecord } from './types.js';

/** `systemctl show` properties, raw, plus the typed ones diagnose uses. */
export interface ServiceState {
  properties: Record<string, string>;
  Result: string | null;
  /** siginfo code of the main process: 1 = exited, 2 = killed, 3 = dumped, 0 = not exited. */
  ExecMainCode: number | null;
  /** Exit code or signal number of the main process. */
  ExecMainStatus: number | null;
  NRestarts: number | null;
  ActiveState: string | null;
  SubState: string | null;
  MainPID: number | null;
}

// A property as a number, or null when absent or not numeric.
function numeric(v: string | undefined): number | null {
  if (v === undefined || v === '' || !/^-?\d+$/.test(v.trim())) return null;
  return Number(v);
}

// Parse `KEY=value` lines (the format of `systemctl show`); unknown keys are kept raw.
export function parseSystemctlShow(text: string): ServiceState {
  const properties: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const eq = raw.indexOf('=');
    if (eq <= 0) continue;
    const key = raw.slice(0, eq).trim();
    if (/^[A-Za-z][A-Za-z0-9]*$/.test(key)) properties[key] = raw.slice(eq + 1);
  }
  const p = properties;
  return {
    properties,
    Result: p.Result ?? null,
    ExecMainCode: numeric(p.ExecMainCode),
    ExecMainStatus: numeric(p.ExecMainStatus),
    NRestarts: numeric(p.NRestarts),
    ActiveState: p.ActiveState ?? null,
    SubState: p.SubState ?? null,
    MainPID: numeric(p.MainPID),
  };
}

// Parse an action log (JSON lines); malformed lines are skipped and counted, never fatal.
export function parseActionLog(text: string): { actions: ActionRecord[]; skipped: number } {
  const actions: ActionRecord[] = [];
  let skipped = 0;
  for (const line of text.split(/\r?\n/)) {
    if (!line.trim()) continue;
    try {
      const v = JSON.parse(line) as Partial<ActionRecord>;
      if (typeof v.ts === 'string' && typeof v.action === 'string')
        actions.push({ unit: '', by: 'unknown', ...v } as ActionRecord);
      else skipped++;
    } catch {
      skipped++;
    }
  }
  return { actions, skipped };
}
