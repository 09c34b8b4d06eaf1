// Where the action log lives (the running user's own: per campaign next to the store, per user for apply/rollback),
// and what a write that fails becomes (one E_LOCAL_STATE line, then records dropped so the rollback can run).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  actionLogOverride,
  campaignActionLogPath,
  createCampaignActionLog,
  createFileActionLog,
  resolveActionLogPath,
  userStateDir,
} from './action-log.js';

const rec = (action: string) => ({
  ts: '2026-12-04T13:00:00.000Z',
  action,
  unit: 'llm.service',
  by: 'spectune',
  host: 'th1',
  why: 'test',
});

describe('action log paths', () => {
  it("is the user's own state dir ($XDG_STATE_HOME, else ~/.local/state), never /var/lib/spectune", () => {
    expect(userStateDir({ HOME: '/home/ann' })).toBe('/home/ann/.local/state/spectune');
    expect(userStateDir({ HOME: '/home/ann', XDG_STATE_HOME: '/srv/state' })).toBe('/srv/state/spectune');
    // A relative XDG_STATE_HOME is invalid per the XDG spec: ignored.
    expect(userStateDir({ HOME: '/home/ann', XDG_STATE_HOME: 'rel' })).toBe('/home/ann/.local/state/spectune');
    expect(resolveActionLogPath(undefined, { HOME: '/home/ann' })).toBe(
      '/home/ann/.local/state/spectune/actions.jsonl',
    );
  });
  it('--action-log wins over $SPECTUNE_ACTION_LOG, which wins over the default; an empty variable is unset', () => {
    expect(resolveActionLogPath('/a.jsonl', { SPECTUNE_ACTION_LOG: '/b.jsonl', HOME: '/h' })).toBe('/a.jsonl');
    expect(resolveActionLogPath(undefined, { SPECTUNE_ACTION_LOG: '/b.jsonl', HOME: '/h' })).toBe('/b.jsonl');
    expect(actionLogOverride(undefined, { SPECTUNE_ACTION_LOG: '' })).toBeUndefined();
  });
  it("a campaign's log sits next to its store, one file per campaign", () => {
    expect(campaignActionLogPath('/srv/tune/spectune.db', 7)).toBe('/srv/tune/spectune.db.actions/campaign-7.jsonl');
  });
});

describe('file action logs', () => {
  it("a campaign log writes to its campaign's file once bound", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'st-al-'));
    const store = join(dir, 'spectune.db');
    const log = createCampaignActionLog(store);
    log.bind(3);
    await log.record(rec('deploy'));
    expect(log.path).toBe(join(dir, 'spectune.db.actions', 'campaign-3.jsonl'));
    expect(JSON.parse(readFileSync(log.path!, 'utf8'))).toMatchObject({ action: 'deploy', unit: 'llm.service' });
    log.bind(4);
    await log.record(rec('restart'));
    expect((await log.read()).map((r) => r.action)).toEqual(['restart']);
  });
  it('reads an older log along (the legacy shared file) and skips one it cannot read', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'st-al-'));
    const old = join(dir, 'old.jsonl');
    writeFileSync(old, `${JSON.stringify(rec('stop'))}\n`);
    const log = createFileActionLog(join(dir, 'new.jsonl'), { alsoRead: [old, join(dir, 'missing.jsonl'), dir] });
    await log.record(rec('start'));
    expect((await log.read({ unit: 'llm.service' })).map((r) => r.action)).toEqual(['stop', 'start']);
  });
  it('a write that fails (ENOSPC on /dev/full) is one E_LOCAL_STATE line with the fix; later records are dropped', async () => {
    const log = createFileActionLog('/dev/full');
    await expect(log.record(rec('deploy'))).rejects.toMatchObject({
      code: 'E_LOCAL_STATE',
      message: 'action log /dev/full: cannot write it: no space left on device (ENOSPC)',
      hint: expect.stringContaining('--action-log PATH'),
    });
    // The rollback that error triggers records too: it must not be refused in turn.
    await expect(log.record(rec('rollback'))).resolves.toBeUndefined();
  });
  it('a path under a file (ENOTDIR) is named in words', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'st-al-'));
    writeFileSync(join(dir, 'f'), '');
    await expect(createFileActionLog(join(dir, 'f', 'a.jsonl')).record(rec('stop'))).rejects.toMatchObject({
      code: 'E_LOCAL_STATE',
      message: expect.stringMatching(
        /: cannot write it: a part of the path is a file, not a directory \(E(NOTDIR|EXIST)\)$/,
      ),
    });
  });
});
