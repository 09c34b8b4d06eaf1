// The demo's report files: spectune-demo.md and spectune-demo.html from the campaign in the store.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ToolError } from '../errors.js';
import type { Db } from '../store/index.js';

// Render the campaign with src/report and write both files; returns their paths.
export async function writeDemoReports(db: Db, campaignId: number, outDir: string): Promise<{ markdown: string; html: string }> {
  const path = '../report/index.js'; // a static import once src/report has landed
  const report = (await import(path).catch(() => null)) as { renderMarkdown(db: Db, id: number): string; renderHtml(db: Db, id: number): string } | null;
  if (!report) throw new ToolError('E_INPUT_UNUSABLE', 'the report module is not available in this build', { hint: 'the campaign itself finished; see spectune-demo.db' });
  const markdown = join(outDir, 'spectune-demo.md');
  const html = join(outDir, 'spectune-demo.html');
  await writeFile(markdown, report.renderMarkdown(db, campaignId));
  await writeFile(html, report.renderHtml(db, campaignId));
  return { markdown, html };
}
