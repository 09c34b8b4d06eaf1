import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sweepStaleControlDirs } from './ssh.js';

const base = mkdtempSync(join(tmpdir(), 'sweep-test-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('sweepStaleControlDirs', () => {
  it('removes only old, empty spectune-ssh-* directories', () => {
    const old = new Date(Date.now() - 3600_000);
    const make = (name: string, opts: { old?: boolean; file?: string } = {}): string => {
      const p = join(base, name);
      mkdirSync(p);
      if (opts.file) writeFileSync(join(p, opts.file), '');
      if (opts.old) utimesSync(p, old, old);
      return p;
    };
    const stale = make('spectune-ssh-stale', { old: true });
    const inUse = make('spectune-ssh-inuse', { old: true, file: 'socket' });
    const fresh = make('spectune-ssh-fresh');
    const other = make('someone-else', { old: true });
    sweepStaleControlDirs(base);
    expect([stale, inUse, fresh, other].map((p) => existsSync(p))).toEqual([false, true, true, true]);
  });
});

describe('sweepStaleControlDirs: directories named after their owner', () => {
  it("removes a dead owner's directory at once, sockets and all; keeps a live owner's and its own", () => {
    // A real process id that is gone: a child that has exited.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    }).stdout;
    const mk = (name: string): string => {
      const p = join(base, name);
      mkdirSync(p);
      writeFileSync(join(p, '0123456789abcdef0123456789abcdef01234567'), '');
      return p;
    };
    const orphan = mk(`spectune-ssh-${dead}-AbC123`);
    const live = mk(`spectune-ssh-${process.ppid}-XyZ789`);
    const mine = mk(`spectune-ssh-${process.pid}-Qwe456`);
    sweepStaleControlDirs(base);
    expect([orphan, live, mine].map((p) => existsSync(p))).toEqual([false, true, true]);
  });
});
