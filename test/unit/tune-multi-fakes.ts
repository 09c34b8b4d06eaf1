// Two scripted systemd hosts for the multi-host service port: each `systemctl restart` runs a timed scenario (journal
// lines, state changes) so that both ranks move on their own clocks, as they do on real hosts.
import type { SpectuneEvent } from '../../src/tune/events.js';
import { createMemoryActionLog } from '../../src/service/action-log.js';
import { diagnoseCollaborators } from '../../src/service/collaborators.js';
import { createServiceController, type ServiceController } from '../../src/service/controller.js';
import { renderNcclWatchdog } from '../../src/sim/traceback.js';
import { ScriptedSystemd, UNIT, prober } from './service-fakes.js';

/** What a rank does after a restart, given its fake systemd and the new main PID. */
export type Scenario = (sd: ScriptedSystemd, pid: number) => void;

/** One rank: its scripted systemd and controller. */
export interface FakeRank {
  sd: ScriptedSystemd;
  ctl: ServiceController;
  /** The scenario the next restart plays (replace it per test). */
  onStart: Scenario;
}

// Run `f` after ms (unref'd: a finished test does not wait for it).
export function later(ms: number, f: () => void): void {
  setTimeout(f, ms).unref();
}

// A rank that comes up: rank0 logs the ready line, a worker just runs.
export const comesUp =
  (rank: number): Scenario =>
  (sd, pid) =>
    later(30, () => {
      sd.log(pid, 'Load weight end. type=X, dtype=torch.bfloat16, avail mem=3.00 GB, mem usage=60.00 GB.');
      if (rank === 0) sd.log(pid, 'The server is fired up and ready to roll!');
      sd.state = { active: 'active', sub: 'running', pid, restarts: 0 };
    });

// A rank that dies of a CUDA OOM at start-up, `afterMs` after its start.
export const diesOfOom =
  (afterMs: number): Scenario =>
  (sd, pid) =>
    later(afterMs, () => {
      sd.log(
        pid,
        'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity of 80 GiB',
      );
      sd.state = { active: 'failed', sub: 'failed', pid: 0, restarts: 0, result: 'signal' };
      sd.log(1, `${UNIT}: Main process exited, code=killed, status=9/KILL`, 'systemd');
    });

// A worker whose peer died: the NCCL watchdog aborts it `afterMs` after its start.
export const abortsOnNccl =
  (afterMs: number): Scenario =>
  (sd, pid) =>
    later(afterMs, () => {
      for (const l of renderNcclWatchdog(1, 12_345, 600_000, 600_081, '1130 01:00:00.000000 123')) sd.log(pid, l);
      sd.state = { active: 'failed', sub: 'failed', pid: 0, restarts: 0, result: 'core-dump' };
      sd.log(1, `${UNIT}: Main process exited, code=dumped, status=6/ABRT`, 'systemd');
    });

// Two ranks on hosts th-a (rank0) and th-b (rank1) sharing one in-memory action log (its records readable) and one
// record of restarts.
export function createRanks(events: SpectuneEvent[] = []): {
  ranks: FakeRank[];
  actionLog: ReturnType<typeof createMemoryActionLog>;
  restarts: string[];
} {
  const actionLog = createMemoryActionLog();
  const restarts: string[] = [];
  let pid = 100;
  const ranks = ['root@th-a', 'root@th-b'].map((name, i) => {
    const sd = new ScriptedSystemd();
    (sd.host as { name: string }).name = name;
    const ctl = createServiceController({
      host: sd.host,
      unit: UNIT,
      engine: 'sglang',
      endpoint: 'http://10.0.0.2:30000',
      actionLog,
      onEvent: (e) => events.push(e),
      collaborators: diagnoseCollaborators,
      prober: prober(true),
      pollMs: 5,
      confirmWindowMs: 200,
    });
    const rank: FakeRank = { sd, ctl, onStart: comesUp(i) };
    sd.host.on(['systemctl', 'restart'], () => {
      pid += 1;
      restarts.push(name);
      sd.state = { active: 'activating', sub: 'start', pid, restarts: 0 };
      rank.onStart(sd, pid);
      return {};
    });
    return rank;
  });
  return { ranks, actionLog, restarts };
}
