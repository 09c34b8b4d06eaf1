// `spectune fold`: write what spectune's drop-in sets into the operator's unit file and remove the drop-in, with no
// restart (the effective ExecStart/Environment/TimeoutStopSec are checked identical before and after; otherwise it
// puts everything back). A backup of the unit file is kept in spectune's state dir on the host, mode preserved.
import { ToolError } from '../errors.js';
import { expectOk } from '../host/command-result.js';
import type { Host } from '../host/types.js';
import type { EventSink } from '../tune/events.js';
import { planFold, type FoldPlan } from '../service/fold.js';
import { catUnit, reloadDaemon } from '../service/systemd.js';
import { statePaths } from '../service/unit.js';
import { openService, type ServiceTarget } from './service-target.js';
import { preflightService } from './local-preflight.js';
import { withUnitLocks } from './unit-lock.js';

/** What a fold did (or, under --dry-run, would do). */
export interface FoldOutcome {
  status: 'folded' | 'dry-run';
  plan: FoldPlan;
  backupPath: string;
  steps: string[];
}

// The effective keys systemd reads, to prove a fold changed nothing that runs.
async function showEffective(host: Host, unit: string): Promise<string> {
  return expectOk(
    await host.exec(
      ['systemctl', 'show', '-p', 'ExecStart', '-p', 'Environment', '-p', 'TimeoutStopUSec', '--', unit],
      { timeoutMs: 30_000 },
    ),
  ).stdout;
}

// The steps of a fold, for --dry-run and the report.
function foldSteps(plan: FoldPlan, backupPath: string): string[] {
  return [
    `cp -p ${plan.unitPath} ${backupPath}`,
    `write ${plan.unitPath} (mode kept)`,
    `rm -f ${plan.dropInPath}`,
    'systemctl daemon-reload',
    'check systemctl show ExecStart/Environment/TimeoutStopUSec unchanged (else put everything back)',
    'mark version none current and known-good (no restart)',
  ];
}

// Fold the drop-in into the unit file (one unit: rank0 or the one --rank/--host names).
export async function foldService(
  target: ServiceTarget,
  onEvent: EventSink,
  opts: { dryRun?: boolean; breakLock?: boolean } = {},
): Promise<FoldOutcome> {
  if (target.ranks.length > 1)
    throw new ToolError('E_USAGE', 'fold acts on one unit: pass --rank N (or --host/--unit)', {
      hint: 'fold each rank in turn',
    });
  preflightService(target, { dryRun: opts.dryRun === true, actionLog: false });
  const svc = await openService(target, onEvent, { dryRun: opts.dryRun, command: 'fold' });
  try {
    const { host, unit } = svc.controller;
    const st = statePaths(unit);
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const backupPath = `${st.dir}/unit-backup-${stamp}.service`;
    const first = planFold(await catUnit(host, unit), unit);
    if (opts.dryRun) return { status: 'dry-run', plan: first, backupPath, steps: foldSteps(first, backupPath) };
    return await withUnitLocks([{ host, unit }], { command: 'apply', breakLock: opts.breakLock, onEvent }, async () => {
      const plan = planFold(await catUnit(host, unit), unit);
      const before = await showEffective(host, unit);
      const dropIn = await host.readFile(plan.dropInPath);
      const mode = Number.parseInt(
        expectOk(await host.exec(['stat', '-c', '%a', '--', plan.unitPath], { timeoutMs: 30_000 })).stdout.trim(),
        8,
      );
      expectOk(await host.exec(['mkdir', '-p', '--', st.dir], { timeoutMs: 30_000 }));
      expectOk(await host.exec(['cp', '-p', '--', plan.unitPath, backupPath], { timeoutMs: 30_000 }));
      await host.writeFile(plan.unitPath, plan.unitAfter, { mode });
      expectOk(await host.exec(['rm', '-f', '--', plan.dropInPath], { timeoutMs: 30_000 }));
      await reloadDaemon(host);
      const after = await showEffective(host, unit);
      if (after !== before) {
        await host.writeFile(plan.unitPath, plan.unitBefore, { mode });
        await host.writeFile(plan.dropInPath, dropIn, { mode: 0o644 });
        await reloadDaemon(host);
        throw new ToolError(
          'E_INPUT_UNUSABLE',
          `${unit}: the folded unit would not run the same config (systemctl show differs); everything was put back, nothing restarted`,
          {
            hint: `compare \`systemctl cat ${unit}\` with the diff of \`spectune fold --dry-run\`; the backup is ${backupPath}`,
          },
        );
      }
      for (const p of [st.current, st.good]) await host.writeFile(p, 'none\n', { mode: 0o644 });
      onEvent({
        type: 'log',
        ts: Date.now(),
        level: 'info',
        message: `${unit}: folded ${plan.dropInPath} into ${plan.unitPath} (backup ${backupPath}); effective config unchanged, not restarted`,
      });
      return { status: 'folded' as const, plan, backupPath, steps: foldSteps(plan, backupPath) };
    });
  } finally {
    await svc.close();
  }
}
