// ssh control directories (/tmp/spectune-ssh-*) do not outlive a killed spectune (issue 19 part 4), on th2 (port
// 32310): a SIGTERM'd command removes its own on the way out; a SIGKILL'd one (no handler can run) leaves its
// directory and a live master behind, and the next run sweeps them (the owner's pid is in the directory's name).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installSimUnit, removeSimUnit, runCli, waitHealthy, type SimUnit } from './service-helpers.js';

const BIN = fileURLToPath(new URL('../../bin/spectune.js', import.meta.url));

// spectune-ssh-* entries of a directory.
function controlDirs(tmp: string): string[] {
  return readdirSync(tmp).filter((n) => n.startsWith('spectune-ssh-'));
}

// Start `spectune doctor` (read-only, several ssh commands) with its own TMPDIR; kill it with `sig` once its control
// master's socket exists; resolve with the exit signal and the control directories seen at the kill.
function killDoctorWhenConnected(
  u: SimUnit,
  tmp: string,
  sig: NodeJS.Signals,
): Promise<{ signal: NodeJS.Signals | null; seen: string[] }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, 'doctor', ...u.flags], {
      env: { ...process.env, TMPDIR: tmp },
      stdio: 'ignore',
    });
    let seen: string[] = [];
    const t0 = Date.now();
    const poll = setInterval(() => {
      const dirs = controlDirs(tmp);
      if (dirs.some((d) => readdirSync(join(tmp, d)).length > 0)) {
        clearInterval(poll);
        seen = dirs;
        child.kill(sig);
      } else if (Date.now() - t0 > 30_000) {
        clearInterval(poll);
        child.kill('SIGKILL');
        fail(new Error('no control socket within 30 s'));
      }
    }, 50);
    child.on('close', (_code, signal) => {
      clearInterval(poll);
      done({ signal, seen });
    });
  });
}

describe('ssh control directories after a kill', () => {
  let u: SimUnit;
  let tmp: string;
  beforeAll(async () => {
    u = await installSimUnit('edges2-ssh', 32310);
    await waitHealthy(u.endpoint);
    tmp = mkdtempSync('/tmp/st-e2s-');
  }, 180_000);
  afterAll(async () => {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
    if (u) {
      await removeSimUnit(u.host, u.unit);
      await u.host.close();
    }
  });

  it('SIGTERM: the command removes its directory on the way out and still dies of SIGTERM', async () => {
    const r = await killDoctorWhenConnected(u, tmp, 'SIGTERM');
    expect(r.seen).toHaveLength(1);
    expect(r.signal).toBe('SIGTERM');
    expect(controlDirs(tmp)).toEqual([]);
  }, 60_000);

  it('SIGKILL leaves the directory; the next run sweeps it and its orphan master', async () => {
    const r = await killDoctorWhenConnected(u, tmp, 'SIGKILL');
    expect(r.signal).toBe('SIGKILL');
    expect(controlDirs(tmp)).toEqual(r.seen);
    const next = await runCli(['status', ...u.flags], { TMPDIR: tmp });
    expect(next.code, next.stderr).toBe(0);
    expect(controlDirs(tmp)).toEqual([]);
    expect(existsSync(join(tmp, r.seen[0]))).toBe(false);
  }, 60_000);
});
