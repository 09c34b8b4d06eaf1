// Every script under bench/ runs in CI at tiny sizes (SPECTUNE_BENCH_SMOKE=1: figures printed, not judged), so none
// can break unseen again (search-vs-grid.mjs once failed on a clean checkout and nobody saw it).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '../..');
/** Each script, its tiny arguments, and a line its output must have. */
const RUNS: Record<string, { args: string[]; expect: RegExp }> = {
  'diagnose-accuracy.mjs': { args: ['--smoke'], expect: /^diagnose accuracy on \d+ real cases/m },
  'diagnose-throughput.mjs': { args: ['--mb', '4'], expect: /^spectune diagnose +[\d.]+ s wall +\d+ MB\/s +peak RSS/m },
  'search-vs-grid.mjs': { args: ['--seeds', '1'], expect: /^qwen3-8b-1gpu \| steps \|/m },
  'sim-calibration.mjs': { args: ['--tokens', '32'], expect: /steps=10 topk=1: start-up fails with Not enough memory/ },
  'accuracy.mjs': { args: ['--levels', '1', '--tokens', '20'], expect: /^C floor = CPU per read/m },
  'slurm-parallel.mjs': {
    args: ['--scale', '0.25'],
    expect: /^3-node \/ sequential wall time = \d+% \(target <= 40%\); same winner: yes/m,
  },
};

/** Scripts that need the real test hosts: their short run is an e2e test instead. */
const IN_E2E: Record<string, string> = { 'faults.mjs': 'test/e2e/faults.test.ts' };

beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist/cli/main.js')))
    execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'ignore' });
}, 180_000);

describe('bench/ scripts in smoke mode', () => {
  it('are all listed here (a new script gets a smoke run)', () => {
    expect(
      readdirSync(join(ROOT, 'bench'))
        .filter((f) => f.endsWith('.mjs'))
        .sort(),
    ).toEqual([...Object.keys(RUNS), ...Object.keys(IN_E2E)].sort());
    for (const [script, test] of Object.entries(IN_E2E))
      expect(readFileSync(join(ROOT, test), 'utf8')).toContain(`bench/${script}`);
  });
  it.each(Object.entries(RUNS))(
    '%s runs from the built package and prints its figures',
    (script, run) => {
      const r = spawnSync(process.execPath, [join(ROOT, 'bench', script), ...run.args], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 240_000,
        env: { ...process.env, SPECTUNE_BENCH_SMOKE: '1' },
      });
      expect(r.status, `${r.stdout.slice(-800)}\n${r.stderr.slice(-1500)}`).toBe(0);
      expect(`${r.stdout}\n${r.stderr}`).toMatch(run.expect);
    },
    300_000,
  );
});
