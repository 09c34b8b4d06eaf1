import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createCampaign, openStore, updateCampaign } from '../store/index.js';
import { readRunningCampaigns, type LockHolder } from './status.js';

const dir = mkdtempSync(join(tmpdir(), 'spectune-status-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("status: the running campaign from spectune.yaml's store", () => {
  it("lists the running campaigns: live under a tune's lock, else a killed run that --resume goes on", () => {
    const store = join(dir, 'spectune.db');
    const db = openStore(store);
    const done = createCampaign(db, { name: 'old', engine: 'sglang', config: {} });
    updateCampaign(db, done.id, { status: 'done' });
    const running = createCampaign(db, { name: 'now', engine: 'sglang', config: {} });
    db.close();
    const free = readRunningCampaigns(store, null);
    expect(free.map((c) => c.id)).toEqual([running.id]);
    expect(free[0].text).toMatch(
      new RegExp(
        `^#${running.id} now running since \\S+, 0 trials so far \\(${store}\\): no tune holds the unit's lock.*spectune tune --resume`,
      ),
    );
    const lock: LockHolder = {
      user: 'ops',
      machine: 'ws1',
      pid: 42,
      command: 'tune',
      startedAt: '2026-01-01T00:00:00.000Z',
      text: 'ops@ws1 pid 42 (tune)',
    };
    expect(readRunningCampaigns(store, lock)[0].text).toMatch(/, by ops@ws1 pid 42 \(tune\)$/);
  });

  it('a store that does not exist is not created', () => {
    const missing = join(dir, 'none.db');
    expect(readRunningCampaigns(missing, null)).toEqual([]);
    expect(existsSync(missing)).toBe(false);
  });
});
