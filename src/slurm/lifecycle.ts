// One trial job's life over the client: wait for it to start (node), for the engine to answer (endpoint), end it
// with a drain that fits KillWait, and read its record and output into a verdict. Polls; Ctrl-C aborts every wait.
import { setTimeout as sleep } from 'node:timers/promises';
import { findFatalLine } from '../diagnose/index.js';
import type { EngineName } from '../engines/types.js';
import { LIVE_STATES, type SlurmClient } from './client.js';
import { diagnoseSlurmJob } from './verdict.js';
import type { SlurmJob } from './types.js';
import type { Diagnosis, Verdict } from '../diagnose/index.js';

/** How often job state and readiness are polled. */
export const POLL_MS = 500;
/** Time a request to /health may take before it counts as not ready. */
const HEALTH_TIMEOUT_MS = 2000;
/** Seconds added to KillWait before a job that ignores even SIGKILL is reported. */
const KILL_MARGIN_SEC = 10;

/** How a trial job is ended (pure plan). */
export interface JobEndPlan {
  /** Send SIGTERM ourselves first and wait for the drain (the drain is longer than KillWait would allow). */
  signalFirst: boolean;
  /** Seconds to wait for the engine to exit on its SIGTERM before scancel. */
  drainSec: number;
  why: string;
}

// A drain that fits the cluster: within KillWait a plain scancel is enough; a longer drain is signalled first and
// waited for, so Slurm's SIGKILL after KillWait never cuts it (that cut is the stop timeout diagnose reports).
export function planJobEnd(drainSec: number, killWaitSec: number): JobEndPlan {
  if (drainSec <= killWaitSec)
    return { signalFirst: false, drainSec: 0, why: `drain (${drainSec}s) fits KillWait=${killWaitSec}s: scancel` };
  return {
    signalFirst: true,
    drainSec,
    why: `drain (${drainSec}s) is longer than KillWait=${killWaitSec}s: SIGTERM first, wait up to ${drainSec}s, then scancel`,
  };
}

/** Where a started job serves. */
export interface StartedJob {
  job: SlurmJob;
  node: string;
}

// Wait until the job runs (its node known) or ends first; null job = Slurm forgot it.
export async function waitForStart(
  client: SlurmClient,
  jobId: string,
  o: { timeoutMs: number; signal?: AbortSignal; pollMs?: number },
): Promise<StartedJob | { ended: SlurmJob | null; reason: string }> {
  const until = Date.now() + o.timeoutMs;
  let last: SlurmJob | null = null;
  while (Date.now() < until) {
    o.signal?.throwIfAborted();
    last = await client.readJob(jobId);
    if (!last) return { ended: null, reason: `job ${jobId} is unknown to scontrol and sacct` };
    if (last.state === 'RUNNING' && last.nodes.length) return { job: last, node: last.nodes[0] };
    if (!LIVE_STATES.has(last.state))
      return { ended: last, reason: `job ${jobId} ended before it ran: ${last.stateText}` };
    await sleep(o.pollMs ?? POLL_MS, undefined, { signal: o.signal });
  }
  return {
    ended: null,
    reason: `job ${jobId} did not start within ${Math.round(o.timeoutMs / 1000)}s (${last?.state ?? '?'}${last?.reason ? `, ${last.reason}` : ''})`,
  };
}

// Whether the engine answers its health path now.
async function isHealthy(url: string): Promise<boolean> {
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) });
    await r.body?.cancel();
    return r.status === 200;
  } catch {
    return false;
  }
}

/** The outcome of waiting for the engine. */
export type ReadyOutcome = { ready: true; elapsedMs: number } | { ready: false; reason: string; fatal: string | null };

// Wait for the engine to answer, failing fast on a fatal line in the output or the job ending.
export async function waitForEngine(
  client: SlurmClient,
  jobId: string,
  o: { url: string; outputPath: string; engine: EngineName; timeoutMs: number; signal?: AbortSignal; pollMs?: number },
): Promise<ReadyOutcome> {
  const t0 = Date.now();
  for (let i = 0; Date.now() - t0 < o.timeoutMs; i++) {
    o.signal?.throwIfAborted();
    if (await isHealthy(o.url)) return { ready: true, elapsedMs: Date.now() - t0 };
    if (i % 4 === 3) {
      const job = await client.readJob(jobId);
      if (job && !LIVE_STATES.has(job.state))
        return { ready: false, reason: `job ${jobId} ended while starting: ${job.stateText}`, fatal: null };
      const out = await client.readOutput(o.outputPath);
      const fatal = out
        ?.split('\n')
        .map((l) => ({ l, hit: findFatalLine(l, o.engine) }))
        .find((x) => x.hit && !x.hit.ruleId.startsWith('slurm.'));
      if (fatal)
        return {
          ready: false,
          reason: `fatal line in the job output: ${fatal.l.trim().slice(0, 200)}`,
          fatal: fatal.l,
        };
    }
    await sleep(o.pollMs ?? POLL_MS, undefined, { signal: o.signal });
  }
  return {
    ready: false,
    reason: `the engine did not answer ${o.url} within ${Math.round(o.timeoutMs / 1000)}s`,
    fatal: null,
  };
}

// Wait until the job is no longer live; returns its last record.
async function waitEnded(client: SlurmClient, jobId: string, sec: number, pollMs: number): Promise<SlurmJob | null> {
  const until = Date.now() + sec * 1000;
  let job: SlurmJob | null = null;
  do {
    job = await client.readJob(jobId);
    if (!job || !LIVE_STATES.has(job.state)) return job;
    await sleep(pollMs);
  } while (Date.now() < until);
  return job;
}

// End a job by the plan; never aborted by Ctrl-C (a half-ended job is what must not happen).
export async function endJob(
  client: SlurmClient,
  jobId: string,
  plan: JobEndPlan,
  killWaitSec: number,
  pollMs = POLL_MS,
): Promise<{ drained: boolean; job: SlurmJob | null }> {
  const now = await client.readJob(jobId);
  if (!now || !LIVE_STATES.has(now.state)) return { drained: true, job: now };
  if (plan.signalFirst) {
    await client.signal(jobId, 'TERM').catch(() => {});
    const after = await waitEnded(client, jobId, plan.drainSec, pollMs);
    if (!after || !LIVE_STATES.has(after.state)) return { drained: true, job: after };
  }
  await client.cancel(jobId);
  const job = await waitEnded(client, jobId, killWaitSec + KILL_MARGIN_SEC, pollMs);
  return { drained: !plan.signalFirst, job };
}

// The record, output and verdict of a job (any job: `spectune diagnose --slurm-job`, or a trial's end).
export async function readJobVerdict(
  client: SlurmClient,
  jobId: string,
  o: { killWaitSec: number | null; cancelledByUs: boolean | null; engine?: EngineName; outputPath?: string },
): Promise<{ job: SlurmJob; output: string | null; verdict: Verdict; diagnosis: Diagnosis } | null> {
  const live = await client.readJob(jobId);
  const acct = await client.readAccounting(jobId);
  const job =
    acct && live && !LIVE_STATES.has(acct.state)
      ? { ...acct, exit: live.exit ?? acct.exit, stdout: live.stdout, reason: live.reason }
      : (live ?? acct);
  if (!job) return null;
  const path = o.outputPath ?? job.stdout;
  const output = path ? await client.readOutput(path.replace(/%j/g, jobId)) : null;
  const d = diagnoseSlurmJob({
    job,
    output,
    killWaitSec: o.killWaitSec,
    cancelledByUs: o.cancelledByUs,
    engine: o.engine,
  });
  const diagnosis: Diagnosis = {
    ...(d.engine ?? { rootException: null, timeline: [], lifetimes: [] }),
    verdict: d.verdict,
  };
  return { job, output, verdict: d.verdict, diagnosis };
}
