// `spectune demo`: the whole job on this machine, no systemd, no root, no GPU: a SIMULATED SGLang engine under the
// process manager, a real campaign (search, crash loop, diagnosis, rollback, soak), and the report.
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { validateConfig, type SpectuneConfig } from '../config/index.js';
import { InternalError } from '../errors.js';
import { ensureOutputDir } from '../local-files.js';
import type { EventSink } from '../tune/events.js';
import { createProcessManager, type ProcessManager } from '../procman/index.js';
import { createFileActionLog, createServiceController } from '../service/index.js';
import { openStore, type Db } from '../store/index.js';
import { buildDemoConfig, DEMO_TIME_SCALE, DEMO_UNIT, renderDemoUnit } from './demo-config.js';
import { createProcmanHost } from './demo-host.js';
import { writeDemoReports } from './demo-report.js';
import { runCampaign, type CampaignResult } from './tune.js';
import { createBenchPort } from './tune-bench.js';
import { createSearchPort } from './tune-search.js';
import { createControllerServicePort, pickConfig } from './tune-service.js';
import { createSqliteTuneStore, markCampaignInterrupted } from './tune-store.js';
import { specFromConfig } from './tune-wiring.js';

/** The built CLI, relative to dist/app/demo.js. */
const BIN = fileURLToPath(new URL('../../bin/spectune.js', import.meta.url));

/** Options of one demo run. */
export interface DemoOptions {
  /** Directory for the report, the store and the process manager's files (default: a new temp dir). */
  outDir?: string;
  timeScale?: number;
  /** Leave the simulated engine running after the demo (default: stop it). */
  keep?: boolean;
  onEvent: EventSink;
  signal?: AbortSignal;
  now?: () => number;
}

/** What the demo ends with. */
export interface DemoResult {
  outDir: string;
  reports: { markdown: string; html: string };
  campaign: CampaignResult;
  /** The service as the campaign left it (checked before the demo stops it). */
  final: { settings: Record<string, unknown>; healthy: boolean; execStart: string | null };
  wallMs: number;
}

// A free TCP port on the loopback interface.
async function findFreePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.once('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (addr && typeof addr === 'object' ? res(addr.port) : rej(new InternalError('no port'))));
    });
  });
}

// Write the unit and the config the demo uses, so the operator can read (and reuse) them.
async function prepareFiles(outDir: string, port: number, timeScale: number) {
  const root = join(outDir, 'root');
  await mkdir(join(root, 'etc/systemd/system'), { recursive: true });
  await writeFile(
    join(root, 'etc/systemd/system', DEMO_UNIT),
    renderDemoUnit({ node: process.execPath, bin: BIN, port, timeScale }),
  );
  const raw = buildDemoConfig(port, './spectune-demo.db');
  await writeFile(
    join(outDir, 'spectune-demo.yaml'),
    `# spectune demo: SIMULATED engine under the process manager\n${stringify(raw)}`,
  );
  const v = validateConfig(raw);
  if (!v.ok) throw new InternalError(`demo config invalid: ${v.errors.join('; ')}`);
  return { root, config: v.config };
}

// Run the campaign against the started service and capture where it ended.
async function runDemoCampaign(
  pm: ProcessManager,
  root: string,
  db: Db,
  config: SpectuneConfig,
  opts: DemoOptions,
  outDir: string,
) {
  const host = createProcmanHost(pm, root);
  const ctl = createServiceController({
    host,
    unit: DEMO_UNIT,
    engine: 'sglang',
    endpoint: config.target.endpoint,
    onEvent: opts.onEvent,
    actionLog: createFileActionLog(join(outDir, 'actions.jsonl')),
  });
  const deps = {
    service: createControllerServicePort(ctl),
    bench: createBenchPort(config, null),
    search: createSearchPort(config, { confirmProbes: true }),
    store: createSqliteTuneStore(db, 'sglang'),
    now: opts.now ?? Date.now,
  };
  const campaign = await runCampaign(
    deps,
    { ...specFromConfig(config), confirmFirstRefusal: true, simulated: true },
    { resume: false, restore: false },
    opts.onEvent,
    opts.signal,
  );
  const st = await ctl.status();
  const final = {
    settings: pickConfig(st.settings, ['speculative_num_steps']),
    healthy: st.health.ok,
    execStart: st.execStart,
  };
  return { campaign, final };
}

// The demo, start to finish.
export async function runDemo(opts: DemoOptions): Promise<DemoResult> {
  const now = opts.now ?? Date.now;
  const t0 = now();
  const outDir =
    opts.outDir === undefined ? await mkdtemp(join(tmpdir(), 'spectune-demo-')) : ensureOutputDir('--out', opts.outDir);
  const port = await findFreePort();
  const { root, config } = await prepareFiles(outDir, port, opts.timeScale ?? DEMO_TIME_SCALE);
  const pm = createProcessManager(join(outDir, 'procman'));
  const db = openStore(join(outDir, 'spectune-demo.db'));
  try {
    const host = createProcmanHost(pm, root);
    await host.reload();
    opts.onEvent({
      type: 'log',
      ts: now(),
      level: 'info',
      message: `demo: starting the SIMULATED engine ${DEMO_UNIT} on 127.0.0.1:${port} (files in ${outDir})`,
    });
    await pm.start(DEMO_UNIT);
    const { campaign, final } = await runDemoCampaign(pm, root, db, config, opts, outDir);
    if (campaign.status === 'interrupted')
      markCampaignInterrupted(db, campaign.campaignId, {
        bestIndex: campaign.best?.index ?? null,
        summary: campaign.summary,
      });
    const reports = await writeDemoReports(db, campaign.campaignId, outDir);
    return { outDir, reports, campaign, final, wallMs: now() - t0 };
  } finally {
    db.close();
    if (!opts.keep) await pm.close();
  }
}
