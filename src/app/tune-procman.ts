// `manager: process` for `spectune tune`: the target runs under spectune's own process manager (src/procman) on
// this machine, for hosts without systemd (a rented GPU box, a container). The operator writes the unit file under
// <processDir>/etc/systemd/system/<unit>; the campaign deploys drop-ins beside it exactly as under systemd.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { SpectuneConfig } from '../config/index.js';
import { ToolError } from '../errors.js';
import type { EventSink } from '../tune/events.js';
import { createProcessManager } from '../procman/index.js';
import { createProcmanHost, type ProcmanHost } from './demo-host.js';

/** The process-manager target of a campaign: a Host over the manager; close() stops the service. */
export interface ProcmanTarget {
  host: ProcmanHost;
  root: string;
  close(): Promise<void>;
}

// Open the manager for the config's unit, define it from its unit file and start it unless it runs already.
// A dry run keeps the manager's state in a temporary directory and starts nothing: it changes no file.
export async function openProcmanTarget(
  cfg: SpectuneConfig,
  baseDir: string,
  onEvent: EventSink,
  opts: { dryRun?: boolean } = {},
): Promise<ProcmanTarget> {
  const unit = cfg.target.hosts[0]?.unit ?? '';
  const root = resolve(baseDir, cfg.target.processDir);
  const unitPath = join(root, 'etc/systemd/system', unit);
  if (!existsSync(unitPath)) {
    throw new ToolError('E_CONFIG_INVALID', `target.processDir: no unit file ${unitPath}`, {
      hint: `write the service's unit file (ExecStart=..., Restart=, TimeoutStopSec=) there, or fix target.processDir / target.hosts[0].unit`,
    });
  }
  const stateDir = opts.dryRun ? await mkdtemp(join(tmpdir(), 'spectune-procman-dry-')) : join(root, 'procman');
  const pm = createProcessManager(stateDir);
  const host = createProcmanHost(pm, root);
  const close = async () => {
    await pm.close();
    if (opts.dryRun) await rm(stateDir, { recursive: true, force: true });
  };
  try {
    await host.reload();
    if (!opts.dryRun && pm.show(unit).ActiveState !== 'active') {
      onEvent({
        type: 'log',
        ts: Date.now(),
        level: 'info',
        message: `process manager: starting ${unit} (${unitPath}); it stops when spectune exits`,
      });
      await pm.start(unit);
    }
  } catch (e) {
    await close();
    throw e;
  }
  return { host, root, close };
}
