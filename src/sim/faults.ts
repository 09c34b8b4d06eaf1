// Injected failures and multi-node peer loss, logged exactly as SGLang / PyTorch log them, then the process dies.
import { RUNNING_SIGQUIT_MSG } from './log-format.js';
import {
  formatGlogStamp,
  renderCudaOom,
  renderIllegalMemoryAccess,
  renderNcclWatchdog,
  renderWatchdogTimeout,
} from './traceback.js';
import { hostDistGroup, joinDistGroup, parseDistAddr } from './dist.js';
import type { SchedulerFault } from './scheduler.js';
import type { RunState } from './server.js';

/** The scheduler watchdog waits this long after its message before signalling the parent (s). */
const WATCHDOG_SIGQUIT_DELAY_S = 5;
/** PyTorch's default NCCL collective timeout (ms); a dead peer is noticed when it expires. */
const NCCL_TIMEOUT_MS = 600_000;

/** Reactions to failures. */
export interface FaultHandlers {
  onSchedulerFault: (f: SchedulerFault) => void;
  onPeerLost: () => void;
}

// A scheduler exception: traceback on the rank, SIGQUIT to the parent, kill_process_tree → SIGKILL.
function dieOfException(st: RunState, traceback: string): void {
  st.logger.rank(traceback);
  st.logger.main(RUNNING_SIGQUIT_MSG);
  st.finish({ kind: 'signal', signal: 'SIGKILL' });
}

// A forward that never returns: health fails, the watchdog fires after --watchdog-timeout, then the tree dies.
async function hangScheduler(st: RunState): Promise<void> {
  st.ctx?.scheduler.stop();
  if (st.ctx) st.ctx.status = 'hung';
  if (!(await st.sleep(st.plan.watchdogTimeoutS * 1000 * st.plan.timeScale))) return;
  st.logger.rank(renderWatchdogTimeout(st.plan.watchdogTimeoutS));
  if (!(await st.sleep(WATCHDOG_SIGQUIT_DELAY_S * 1000 * st.plan.timeScale))) return;
  st.logger.main(RUNNING_SIGQUIT_MSG);
  st.finish({ kind: 'signal', signal: 'SIGKILL' });
}

// A non-zero rank whose peer died: the NCCL watchdog times out and aborts the process (SIGABRT).
async function abortOnNcclTimeout(st: RunState): Promise<void> {
  const ms = NCCL_TIMEOUT_MS * st.plan.timeScale;
  if (!(await st.sleep(ms))) return;
  const lines = renderNcclWatchdog(
    st.plan.nodeRank,
    12_345,
    NCCL_TIMEOUT_MS,
    NCCL_TIMEOUT_MS + 81,
    formatGlogStamp(new Date()),
  );
  for (const l of lines) st.logger.raw(l);
  st.finish({ kind: 'signal', signal: 'SIGABRT' });
}

// Build the handlers for one run.
export function createFaultHandlers(st: RunState): FaultHandlers {
  return {
    onSchedulerFault: (f) => {
      if (f.kind === 'crash') return dieOfException(st, renderIllegalMemoryAccess());
      if (f.kind === 'hang') return void hangScheduler(st);
      const total = st.profile.hardware.gpu_memory_gb * 0.9313;
      dieOfException(st, renderCudaOom(0.5 + f.batch * 0.05, total, 120.38, total - 0.12));
    },
    onPeerLost: () => {
      if (st.closed) return;
      if (st.plan.nodeRank > 0) return void abortOnNcclTimeout(st);
      void hangScheduler(st);
    },
  };
}

// Multi-node: rank 0 hosts the group on --dist-init-addr, others join it; single node returns at once.
export async function startDist(st: RunState, faults: FaultHandlers): Promise<void> {
  if (st.plan.settings.nnodes <= 1 || !st.plan.distInitAddr) return;
  const addr = parseDistAddr(st.plan.distInitAddr);
  if (!addr) throw new Error(`bad --dist-init-addr ${st.plan.distInitAddr}`);
  const abort = new AbortController();
  st.cleanups.push(() => abort.abort());
  if (st.plan.nodeRank > 0)
    return joinDistGroup(addr.host, addr.port, st.plan.timeScale, faults.onPeerLost, abort.signal);
  try {
    await hostDistGroup(addr.host, addr.port, st.plan.settings.nnodes - 1, faults.onPeerLost, abort.signal);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    st.logger.rank(
      `torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. ` +
        `port: ${addr.port}, useIPv6: 0, code: -98, name: ${err.code ?? 'EADDRINUSE'}, message: address already in use`,
    );
    st.finish({ kind: 'exit', code: 1 });
  }
}
