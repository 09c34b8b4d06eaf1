// A campaign whose store fills up mid-way (SQLite's own SQLITE_FULL, via max_page_count: the error a full disk gives;
// the real tmpfs case is bench/faults/disk-full.mjs): one coded line naming the store and the fix, no stack; the
// service on a known-good config; the file consistent (integrity_check ok); once there is room again --resume
// finishes with no finished trial lost.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCampaign } from '../../src/app/tune.js';
import { createSqliteTuneStore } from '../../src/app/tune-store.js';
import { ToolError } from '../../src/errors.js';
import { closeStore, guardDiskFull, listTrials, openStore } from '../../src/store/index.js';
import { createFakeDeps, createWorld, TEST_SPEC } from './tune-fakes.js';

/** The store writes after which the store may not grow any more (trial start, end, activity marks). */
const FILL_AFTER_WRITES = [2, 5, 8, 11, 14];

describe('a campaign whose store fills up', () => {
  it.each(FILL_AFTER_WRITES)(
    'full after %i writes: E_STORE_FULL, service known-good, file consistent, resume loses nothing',
    async (n) => {
      const path = join(mkdtempSync(join(tmpdir(), 'spectune-full-')), 'tune.db');
      const db = openStore(path);
      const world = createWorld();
      const inner = createSqliteTuneStore(db, 'sglang');
      let writes = 0;
      const fillAt = () => {
        if (++writes === n) db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
      };
      const filling = {
        ...inner,
        saveTrial: (...a: Parameters<typeof inner.saveTrial>) => {
          fillAt();
          inner.saveTrial(...a);
        },
        markActive: (...a: Parameters<typeof inner.markActive>) => {
          fillAt();
          inner.markActive(...a);
        },
      };
      const store = guardDiskFull(filling, db.name);
      const err = await runCampaign(
        { ...createFakeDeps(world), store },
        TEST_SPEC,
        { resume: false, restore: false },
        () => {},
      ).then(
        () => null,
        (x: unknown) => x,
      );
      expect(err).toBeInstanceOf(ToolError);
      const e = err as ToolError;
      expect(e.code).toBe('E_STORE_FULL');
      expect(e.message).toMatch(
        new RegExp(
          `^store ${path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: the disk is full \\(.+ free of .+\\); nothing was lost, the store is consistent$`,
        ),
      );
      expect(e.hint).toMatch(/^free space on \/\S* .*then run spectune tune --resume$/);
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(world.current).toEqual(world.lastGood);
      const savedBefore = listTrials(db, 1)
        .filter((t) => t.state === 'measured')
        .map((t) => `${t.seq} ${JSON.stringify(t.params)}`);
      db.pragma('max_page_count = 1073741823');
      const done = await runCampaign(
        { ...createFakeDeps(world), store },
        TEST_SPEC,
        { resume: true, restore: false },
        () => {},
      );
      expect(done.status).toBe('done');
      const after = listTrials(db, done.campaignId)
        .filter((t) => t.state === 'measured')
        .map((t) => `${t.seq} ${JSON.stringify(t.params)}`);
      for (const s of savedBefore) expect(after).toContain(s);
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      closeStore(db);
    },
  );
});
