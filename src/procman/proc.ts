// Process-group helpers: the group stands in for systemd's cgroup (KillMode=control-group).
import { readdirSync, readFileSync } from 'node:fs';

/** One process of a group, with its command name as the kernel reports it. */
export interface GroupMember {
  pid: number;
  comm: string;
}

// Parse /proc/PID/stat: the comm may contain spaces and parentheses, so split after the last ')'.
function readStat(pid: string): { comm: string; pgrp: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    return { comm: stat.slice(stat.indexOf('(') + 1, close), pgrp: Number(fields[2]) };
  } catch {
    return null;
  }
}

// Members of a process group, main process first (Linux /proc; elsewhere just the main pid).
export function listGroup(pgid: number, fallbackComm: string): GroupMember[] {
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return [{ pid: pgid, comm: fallbackComm }];
  }
  const members = pids.flatMap((p) => {
    const st = readStat(p);
    return st && st.pgrp === pgid ? [{ pid: Number(p), comm: st.comm }] : [];
  });
  return members.sort((a, b) => (a.pid === pgid ? -1 : b.pid === pgid ? 1 : a.pid - b.pid));
}

// Signal a whole process group; a group that is already gone is not an error.
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  if (!Number.isInteger(pgid) || pgid <= 1) return false; // kill(-0) or kill(-1) would hit our own group or everything
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw e;
  }
}
