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
