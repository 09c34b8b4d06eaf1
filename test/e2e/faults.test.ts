// The fault suite's CI version (issues 11 and 19): `node bench/faults.mjs --short` on the real test hosts. Every fault the
// issue names has a row, and every row recovered all its trials with nothing lost.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
/** The faults of issue 11, one module each under bench/faults/; issue 19's abandon (spectune left dead, no --resume)
 *  and issue 25's group (two ranks: network cut and SIGKILL, no rank left on a config its peer does not run). */
const FAULTS = ['sigkill', 'netcut', 'reboot', 'disk-full', 'two-operators', 'fuzz', 'secrets', 'abandon', 'group'];

describe('fault suite (short)', () => {
  it('has a row for every fault, each recovered with nothing lost', () => {
    const r = spawnSync(process.execPath, [join(ROOT, 'bench/faults.mjs'), '--short', '--json'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 1_500_000,
    });
    const rows = JSON.parse(r.stdout || '[]') as {
      fault: string;
      trials: number;
      recovered: number;
      lost: number;
      pass: boolean;
      stateAfter: string;
      notes?: string;
    }[];
    expect(rows.map((x) => x.fault).sort(), r.stderr.slice(-2000)).toEqual([...FAULTS].sort());
    for (const row of rows)
      expect(
        { fault: row.fault, pass: row.pass, lost: row.lost },
        `${row.fault}: ${row.stateAfter} (${row.notes ?? ''})`,
      ).toEqual({ fault: row.fault, pass: true, lost: 0 });
    expect(r.status).toBe(0);
  }, 1_520_000);
});
