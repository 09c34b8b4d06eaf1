// The report an operator sends, checked the way the team will read it: a real campaign (the demo: the SIMULATED
// engine, a real store), its HTML opened in headless Chromium, screenshots kept under test-output/report-browser/.
import { existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runCli } from './tune-support.js';

/** Debian's chromium (scripts/install-deps.sh installs it); the test never downloads a browser. */
const CHROMIUM = '/usr/bin/chromium';
const HAS_CHROMIUM = existsSync(CHROMIUM);
/** Where the screenshots go (gitignored). */
const OUT = join(ROOT, 'test-output', 'report-browser');
/** A laptop screen. */
const VIEWPORT = { width: 1366, height: 900 };
/** Charts narrower than this (CSS px) are too small to read. */
const MIN_CHART_WIDTH = 480;
/** The per-trial charts, by figure id. */
const TRIAL_CHARTS = [
  'chart-trials',
  'chart-objective',
  'chart-ttft-mean',
  'chart-ttft-p99',
  'chart-itl-mean',
  'chart-itl-p99',
];

if (!HAS_CHROMIUM)
  console.warn(`report-browser.test.ts skipped: ${CHROMIUM} is absent (bash scripts/install-deps.sh installs it)`);

interface DemoJson {
  reports: { markdown: string; html: string };
  campaign: { best: { index: number; config: { speculative_num_steps: number } } };
}

// Each chart's y axis: the lowest tick's label and whether that tick sits on the x axis line.
function readYAxes(page: Page) {
  return page.$$eval('svg.chart', (svgs) =>
    svgs.map((svg) => {
      const ticks = [...svg.querySelectorAll('text.ytick')].map((t) => ({
        v: Number(t.textContent),
        y: Number(t.getAttribute('y')),
      }));
      const low = ticks.reduce((a, b) => (b.v < a.v ? b : a));
      const axisY = Number(svg.querySelector('line.axis.x')?.getAttribute('y1'));
      return {
        cls: svg.getAttribute('class'),
        lowest: low.v,
        onAxis: Math.abs(low.y - 4 - axisY) < 0.5,
        width: svg.getBoundingClientRect().width,
      };
    }),
  );
}

describe.skipIf(!HAS_CHROMIUM)(`the HTML report in headless Chromium (skipped when ${CHROMIUM} is absent)`, () => {
  let demo: DemoJson;
  let ctx: BrowserContext;
  let page: Page;
  const errors: string[] = [];

  beforeAll(async () => {
    const run = await runCli(['demo', '--json', '--out', mkdtempSync(join(tmpdir(), 'spectune-report-browser-'))], {});
    expect(run.code, `spectune demo failed:\n${run.stderr.slice(-3000)}`).toBe(0);
    demo = JSON.parse(run.stdout) as DemoJson;
    mkdirSync(OUT, { recursive: true });
    const { chromium } = await import('playwright-core');
    ctx = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'spectune-chromium-')), {
      executablePath: CHROMIUM,
      headless: true,
      viewport: VIEWPORT,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    page = ctx.pages()[0] ?? (await ctx.newPage());
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('request', (r) => {
      if (!r.url().startsWith('file:')) errors.push(`external request: ${r.url()}`);
    });
    await page.goto(pathToFileURL(demo.reports.html).href);
  });

  afterAll(async () => {
    await ctx?.close();
  });

  it('opens without console errors or external requests, and keeps screenshots', async () => {
    const shots = [join(OUT, 'report-full.png'), join(OUT, 'report-top.png'), join(OUT, 'report-print.png')];
    await page.screenshot({ path: shots[0], fullPage: true });
    await page.screenshot({ path: shots[1] });
    for (const id of TRIAL_CHARTS) {
      const path = join(OUT, `${id}.png`);
      await page.locator(`#${id}`).screenshot({ path });
      shots.push(path);
    }
    await page.emulateMedia({ media: 'print' });
    await page.screenshot({ path: shots[2], fullPage: true });
    await page.emulateMedia({ media: 'screen' });
    console.log(`report screenshots:\n${shots.map((s) => `  ${s}`).join('\n')}`);
    expect(errors).toEqual([]);
    for (const s of shots) expect(readFileSync(s).length).toBeGreaterThan(1000);
  });

  it('draws the objective, TTFT and ITL (mean, p99) charts with the winner marked on each', async () => {
    const best = demo.campaign.best.index + 1;
    for (const id of TRIAL_CHARTS) {
      const winner = page.locator(`#${id} svg .winner`);
      await expect(winner.count(), `${id} has no winner marker`).resolves.toBe(1);
      expect(await winner.isVisible()).toBe(true);
      expect(await winner.textContent()).toContain('★ winner');
    }
    expect(await page.locator('#chart-ttft-p99 svg g.series.best').getAttribute('data-seq')).toBe(String(best));
    expect(await page.locator('#chart-trials svg g.bar.best').getAttribute('data-seq')).toBe(String(best));
    expect(await page.locator('#chart-itl-mean figcaption').textContent()).toBe('Inter-token latency, mean');
    expect(await page.locator('#chart-itl-mean svg text.ytitle').textContent()).toBe('ITL mean (ms)');
  });

  it('starts every y axis at zero, on the x axis, at a readable size', async () => {
    const axes = await readYAxes(page);
    expect(axes.length).toBeGreaterThanOrEqual(TRIAL_CHARTS.length + 1);
    for (const a of axes) {
      expect(a, JSON.stringify(a)).toMatchObject({ lowest: 0, onAxis: true });
      expect(a.width).toBeGreaterThanOrEqual(MIN_CHART_WIDTH);
    }
  });

  it('says SIMULATED in the header and in the footer of every printed page', async () => {
    await expect(page.locator('#simulated').isVisible()).resolves.toBe(true);
    expect(await page.locator('#simulated').textContent()).toMatch(/^SIMULATED/);
    expect(await page.title()).toMatch(/^SIMULATED/);
    await page.emulateMedia({ media: 'print' });
    const footer = await page.$eval('.print-footer', (el) => ({
      position: getComputedStyle(el).position,
      display: getComputedStyle(el).display,
      text: el.textContent,
    }));
    await page.emulateMedia({ media: 'screen' });
    expect(footer).toMatchObject({ position: 'fixed', display: 'block' });
    expect(footer.text).toMatch(/^SIMULATED/);
    expect(readFileSync(demo.reports.markdown, 'utf8').split('\n')[0]).toMatch(/^> \*\*SIMULATED/);
  });

  it('shows what is running now and the exact ExecStart line and drop-in to keep', async () => {
    const steps = demo.campaign.best.config.speculative_num_steps;
    expect(await page.locator('#running').textContent()).toContain(`speculative_num_steps=${steps}, the winner`);
    const exec = (await page.locator('#keep pre.keep-exec').textContent()) ?? '';
    expect(exec).toMatch(
      new RegExp(`^ExecStart=\\S+node\\S* \\S+spectune\\.js sim --sim-profile .* --speculative-num-steps ${steps} `),
    );
    const dropIn = (await page.locator('#keep pre.keep-dropin').textContent()) ?? '';
    expect(dropIn).toBe(`[Service]\nExecStart=\n${exec}`);
    expect(await page.locator('#keep table.flags').textContent()).toContain(`--speculative-num-steps ${steps}`);
    expect(readFileSync(demo.reports.markdown, 'utf8')).toContain(`\`\`\`\n${exec}\n\`\`\``);
  });

  it('shows each failure with its verdict: class, cause, confidence and summary, on the chart too', async () => {
    const f = page.locator('section.failure').first();
    expect(await f.locator('.verdict').textContent()).toBe('crash_loop (kv_cache_oom)');
    expect(await f.locator('.confidence').textContent()).toBe('high');
    expect((await f.locator('.verdict-summary').textContent())?.length).toBeGreaterThan(20);
    const bar = page.locator('#chart-trials svg g.bar.failed');
    expect(await bar.locator('text').textContent()).toBe('crash_loop (kv_cache_oom)');
    await expect(bar.locator('line').count(), 'the failed trial is crossed out').resolves.toBe(2);
    expect(await page.locator('#chart-ttft-mean ul.not-plotted').textContent()).toMatch(
      /trial \d+ failed: crash_loop \(kv_cache_oom\), high confidence — /,
    );
  });

  it('puts the latency figures (TTFT, ITL, E2E at p50 and p99) in a table', async () => {
    const head = await page.locator('#latency thead').textContent();
    for (const h of ['TTFT p50 (ms)', 'TTFT p99 (ms)', 'ITL p50 (ms)', 'ITL p99 (ms)', 'E2E p50 (ms)', 'E2E p99 (ms)'])
      expect(head).toContain(h);
    const first = await page.locator('#latency tbody tr').first().locator('td').allTextContents();
    expect(
      first.slice(4).every((v) => Number(v) > 0),
      first.join(' | '),
    ).toBe(true);
  });
});
