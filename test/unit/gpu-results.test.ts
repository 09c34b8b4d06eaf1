// The GPU campaign committed under docs/gpu (scripts/gpu/campaign.sh on an NVIDIA H200) renders from its stored
// SQLite campaigns as it did there: same trials, same winner, the per-concurrency section, and the summary's figures.
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadReportModel } from '../../src/app/report.js';
import { renderHtml, renderMarkdown } from '../../src/report/index.js';
import { openStore } from '../../src/store/index.js';

const DOCS = join(import.meta.dirname, '../../docs/gpu');
const tmp = mkdtempSync(join(tmpdir(), 'spectune-gpu-docs-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const campaigns = readdirSync(DOCS, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .flatMap((run) =>
    readdirSync(join(DOCS, run.name), { withFileTypes: true })
      .filter((d) => d.isDirectory() && existsSync(join(DOCS, run.name, d.name, 'store.db')))
      .map((c) => ({ run: run.name, name: c.name, dir: join(DOCS, run.name, c.name) })),
  );

interface TuneJson {
  status: string;
  restarts: number;
  best: { config: Record<string, number> } | null;
  trials: unknown[];
}

describe('the stored GPU campaigns (docs/gpu)', () => {
  it('are there: two runs, four campaigns', () => {
    expect(campaigns.map((c) => `${c.run}/${c.name}`).sort()).toEqual([
      'run1-one-wave/good-adaptive',
      'run1-one-wave/good-grid',
      'run1-one-wave/poor-adaptive',
      'run2-steady/good-grid',
    ]);
  });

  it.each(campaigns)('$run/$name renders with the winner and trial count of its tune result', ({ dir, run, name }) => {
    const db = join(tmp, `${run}-${name}.db`);
    copyFileSync(join(dir, 'store.db'), db);
    const store = openStore(db);
    try {
      const m = loadReportModel(store);
      const tune = JSON.parse(readFileSync(join(dir, 'tune.json'), 'utf8')) as TuneJson;
      expect(m.campaign.engine).toBe('llamacpp');
      expect(m.counts.trials).toBe(tune.trials.length);
      expect(m.best?.config ?? null).toBe(tune.best ? `spec_draft_n_max=${tune.best.config.spec_draft_n_max}` : null);
      expect(m.concurrencies).toEqual([1, 4, 16, 64]);
      const html = renderHtml(m);
      expect(html).toContain('<h2>Best config per concurrency</h2>');
      expect(renderMarkdown(m)).toContain(
        tune.best
          ? 'Recommended (maximize decodeTokensPerSec.mean at concurrency 1, constraints met)'
          : 'No config met the objective and the constraints.',
      );
    } finally {
      store.close();
    }
  });

  it("summary figures: speculation doubles one user's throughput and stops paying at 64 users", () => {
    const s = JSON.parse(readFileSync(join(DOCS, 'run2-steady/summary.json'), 'utf8')) as {
      perConcurrency: { concurrency: number; best: { nMax: number; vsNospec: number } }[];
      speculationStopsPayingAt: number;
      campaigns: { name: string; best: { nMax: number } | null }[];
    };
    const at = (c: number) => s.perConcurrency.find((p) => p.concurrency === c)!.best;
    expect(at(1).nMax).toBe(16);
    expect(at(1).vsNospec).toBeGreaterThan(100);
    expect(at(64).vsNospec).toBeLessThan(0);
    expect(s.speculationStopsPayingAt).toBe(64);
    expect(s.campaigns.find((c) => c.name === 'good-grid')?.best?.nMax).toBe(16);
  });
});
