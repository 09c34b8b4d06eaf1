// The demo's report files: spectune-demo.md and spectune-demo.html from the campaign in the store.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Db } from '../store/index.js';
import { renderCampaignHtml, renderCampaignMarkdown } from './report.js';

// Render the campaign with the report use case and write both files; returns their paths.
export async function writeDemoReports(
  db: Db,
  campaignId: number,
  outDir: string,
): Promise<{ markdown: string; html: string }> {
  const markdown = join(outDir, 'spectune-demo.md');
  const html = join(outDir, 'spectune-demo.html');
  await writeFile(markdown, renderCampaignMarkdown(db, campaignId));
  await writeFile(html, renderCampaignHtml(db, campaignId));
  return { markdown, html };
}
