// The judgement of each preflight check of `spectune doctor` (pure): facts in, PASS/WARN/FAIL with the fix out.
import { adviseTimeoutStopSec, estimateDrainMs, MARGIN_TEXT, type DrainLoad } from '../service/drain.js';
import type { CheckResult, StartupReading } from './types.js';

/** Inter-token latency assumed when none was measured: a large model on a busy GPU at high concurrency. */
export const CONSERVATIVE_ITL_MS = 200;
/** Queueing and prefill before the first token of the longest request, on top of its decode time. */
const FIRST_TOKEN_ALLOWANCE_S = 10;
/** The drain must fit with this much headroom (ITL varies under load). */
const STOP_HEADROOM = 1.5;
/** Free space for the local store below which a long campaign's raw samples may not fit. */
export const STORE_WARN_BYTES = 1024 ** 3;
/** Free space below which not even one trial's samples fit. */
export const STORE_FAIL_BYTES = 100 * 1024 ** 2;
/** Clock skew between ranks worth a warning: journal lines of two hosts are merged by time. */
export const SKEW_WARN_MS = 500;
/** Clock skew beyond which the merged order of two journals lies (a crash on one rank looks like it followed the other). */
export const SKEW_FAIL_MS = 5000;

// A result with the subject filled in.
function result(
  id: string,
  subject: string,
  status: CheckResult['status'],
  summary: string,
  fix: string | null = null,
  facts?: Record<string, unknown>,
): CheckResult {
  return { id, subject, status, summary, fix, ...(facts ? { facts } : {}) };
}

// Seconds TimeoutStopSec must give: the longest request's decode time plus its first token, with headroom.
export function recommendedStopSec(outputTokens: number, itlMs: number): number {
  const longest = (outputTokens * itlMs) / 1000 + FIRST_TOKEN_ALLOWANCE_S;
  return Math.ceil((longest * STOP_HEADROOM) / 10) * 10;
}

/** Inputs of the stop-timeout judgement. */
export interface StopTimeoutFacts {
  unit: string;
  timeoutStopMs: number | null;
  outputTokens: number;
  /** Measured inter-token latency (ms), or null to use the conservative estimate. */
  itlMs: number | null;
  /** What the engine reports now (in flight, decode rate), when it answered: the ITL and the drain come from it. */
  load?: Omit<DrainLoad, 'assumedOutputTokens' | 'remainingTokens'> | null;
}

// The per-request ITL the engine's measured decode rate implies at a full batch (the aggregate rate shared by
// max_running_requests requests: slower per request than at today's batch, so a conservative figure), or null.
export function measuredItlMs(load: StopTimeoutFacts['load']): number | null {
  if (!load?.genThroughput || load.genThroughput <= 0 || load.running <= 0) return null;
  const batch = Math.max(load.running, load.maxRunning ?? load.running);
  return Math.ceil((batch * 1000) / load.genThroughput);
}

// TimeoutStopSec against the longest request: a shorter one SIGKILLs the drain (the seed-1 stop_timeout trap).
export function judgeStopTimeout(subject: string, f: StopTimeoutFacts): CheckResult {
  const fromEngine = f.itlMs === null ? measuredItlMs(f.load) : null;
  const itl = f.itlMs ?? fromEngine ?? CONSERVATIVE_ITL_MS;
  // Requests in flight now: their drain, estimated from the engine's figures, must fit too.
  const inFlight =
    f.load && f.load.running + f.load.queued > 0
      ? estimateDrainMs({ ...f.load, assumedOutputTokens: f.outputTokens })
      : null;
  const need = Math.max(recommendedStopSec(f.outputTokens, itl), inFlight ? adviseTimeoutStopSec(inFlight.drainMs) : 0);
  const source =
    f.itlMs !== null
      ? '(measured)'
      : fromEngine !== null
        ? `(measured by the engine: ${Math.round(f.load!.genThroughput!)} tok/s over a batch of up to ${Math.max(f.load!.running, f.load!.maxRunning ?? 0)})`
        : '(conservative estimate; pass --itl-ms with your measured p99 ITL)';
  const now = inFlight
    ? `; now in flight: ~${Math.ceil(inFlight.drainMs / 1000)} s to drain (${inFlight.basis}) → TimeoutStopSec=${adviseTimeoutStopSec(inFlight.drainMs)} (${MARGIN_TEXT})`
    : '';
  const basis = `${f.outputTokens} output tokens × ${itl} ms ITL ${source}${now}`;
  const facts = {
    timeoutStopSec: f.timeoutStopMs === null ? null : f.timeoutStopMs / 1000,
    recommendedSec: need,
    outputTokens: f.outputTokens,
    itlMs: itl,
    itlMeasured: f.itlMs !== null || fromEngine !== null,
    ...(inFlight ? { drainNowSec: Math.ceil(inFlight.drainMs / 1000) } : {}),
  };
  if (f.timeoutStopMs === null)
    return result(
      'stop-timeout',
      subject,
      'WARN',
      'TimeoutStopSec unknown (systemctl show gave none)',
      `make sure TimeoutStopSec= is at least ${need} s`,
      facts,
    );
  if (f.timeoutStopMs === Infinity)
    return result(
      'stop-timeout',
      subject,
      'PASS',
      'TimeoutStopSec=infinity: a drain is never cut short (a hung stop is never killed either)',
      null,
      facts,
    );
  const have = f.timeoutStopMs / 1000;
  if (have >= need)
    return result(
      'stop-timeout',
      subject,
      'PASS',
      `TimeoutStopSec ${have} s ≥ ${need} s needed to drain the longest request (${basis})`,
      null,
      facts,
    );
  return result(
    'stop-timeout',
    subject,
    'WARN',
    `TimeoutStopSec ${have} s < ${need} s needed to drain the longest request (${basis}): a restart mid-request ends in SIGKILL (stop_timeout), not a clean stop`,
    `raise it: \`systemctl edit ${f.unit}\` → [Service] TimeoutStopSec=${need}s, or pass --timeout-stop-sec ${need} to spectune apply`,
    facts,
  );
}

// Start-up time from the journal against the ready deadline of the benchmark config.
export function judgeStartup(subject: string, r: StartupReading | null, readyTimeoutMs: number): CheckResult {
  const limit = readyTimeoutMs / 1000;
  if (!r?.last) {
    const why = r?.pending
      ? 'the current start has not logged its ready line yet'
      : 'no start with a ready line in the journal of the current run';
    return result(
      'startup',
      subject,
      'WARN',
      `start-up time unknown: ${why}`,
      `the first trial will measure it; the ready deadline is ${limit} s (benchmark.timeouts.ready)`,
      { readyTimeoutSec: limit },
    );
  }
  const worst = r.longest ?? r.last;
  const facts = { lastSec: r.last.seconds, longestSec: worst.seconds, starts: r.starts, readyTimeoutSec: limit };
  if (worst.seconds > limit) {
    return result(
      'startup',
      subject,
      'FAIL',
      `start-up took ${worst.seconds} s, longer than the ready deadline of ${limit} s: every trial would time out`,
      `raise benchmark.timeouts.ready to ${Math.ceil((worst.seconds * 2) / 60)}m`,
      facts,
    );
  }
  if (worst.seconds > limit / 2) {
    return result(
      'startup',
      subject,
      'WARN',
      `start-up took ${worst.seconds} s, more than half the ready deadline of ${limit} s`,
      `raise benchmark.timeouts.ready to ${Math.ceil((worst.seconds * 2) / 60)}m`,
      facts,
    );
  }
  return result(
    'startup',
    subject,
    'PASS',
    `start-up took ${r.last.seconds} s (ready line: ${r.last.readyLine.slice(0, 80)}); ready deadline ${limit} s`,
    null,
    facts,
  );
}

// Free space and write access of the directory that will hold the local SQLite store.
export function judgeStoreDisk(
  subject: string,
  f: { dir: string; freeBytes: number | null; writable: boolean },
): CheckResult {
  const gib = f.freeBytes === null ? null : Math.round((f.freeBytes / 1024 ** 3) * 10) / 10;
  const facts = { dir: f.dir, freeBytes: f.freeBytes, writable: f.writable };
  if (!f.writable)
    return result(
      'store-disk',
      subject,
      'FAIL',
      `${f.dir} is not writable (the store and its WAL go there)`,
      'set store: to a writable path in spectune.yaml, or run from a writable directory',
      facts,
    );
  if (f.freeBytes === null)
    return result('store-disk', subject, 'WARN', `free space of ${f.dir} unknown`, 'check it with df', facts);
  if (f.freeBytes < STORE_FAIL_BYTES)
    return result(
      'store-disk',
      subject,
      'FAIL',
      `${f.dir}: only ${gib} GiB free`,
      'free space or set store: to another disk',
      facts,
    );
  if (f.freeBytes < STORE_WARN_BYTES)
    return result(
      'store-disk',
      subject,
      'WARN',
      `${f.dir}: ${gib} GiB free; a long campaign's raw samples may not fit`,
      'free space or set store: to another disk',
      facts,
    );
  return result('store-disk', subject, 'PASS', `${f.dir}: ${gib} GiB free, writable`, null, facts);
}

// Clock offsets of the hosts against this machine (ms): skew between ranks of a multi-host target.
export function judgeClockSkew(offsets: { host: string; offsetMs: number | null }[]): CheckResult {
  const subject = offsets.map((o) => o.host).join(' + ');
  if (offsets.length < 2) return result('clock-skew', subject, 'SKIP', 'one host: no skew between ranks to check');
  const known = offsets.filter((o): o is { host: string; offsetMs: number } => o.offsetMs !== null);
  if (known.length < offsets.length)
    return result(
      'clock-skew',
      subject,
      'WARN',
      `clock of ${offsets
        .filter((o) => o.offsetMs === null)
        .map((o) => o.host)
        .join(', ')} unreadable (date +%s%3N failed)`,
      'check that `date` works on each host',
    );
  const skew = Math.max(...known.map((o) => o.offsetMs)) - Math.min(...known.map((o) => o.offsetMs));
  const facts = { skewMs: skew, offsets: Object.fromEntries(known.map((o) => [o.host, o.offsetMs])) };
  const fix = 'run NTP on every host (timedatectl set-ntp true, or chrony) so both journals share one timeline';
  if (skew > SKEW_FAIL_MS)
    return result(
      'clock-skew',
      subject,
      'FAIL',
      `clocks differ by ${(skew / 1000).toFixed(1)} s: a failure on one rank would be ordered wrongly against the other`,
      fix,
      facts,
    );
  if (skew > SKEW_WARN_MS) return result('clock-skew', subject, 'WARN', `clocks differ by ${skew} ms`, fix, facts);
  return result('clock-skew', subject, 'PASS', `clocks agree within ${skew} ms`, null, facts);
}

/** What the journal probe saw. */
export interface JournalFacts {
  denied: boolean;
  records: number;
  error: string | null;
}

// Read access to the unit's journal (diagnosis and readiness depend on it).
export function judgeJournal(subject: string, f: JournalFacts, fixHint: string): CheckResult {
  if (f.denied)
    return result(
      'journal',
      subject,
      'FAIL',
      'not allowed to read the system journal (diagnosis and readiness need it)',
      fixHint,
    );
  if (f.error)
    return result(
      'journal',
      subject,
      'FAIL',
      `journalctl failed: ${f.error}`,
      'check that journald runs on the host (systemctl status systemd-journald)',
    );
  if (f.records === 0)
    return result(
      'journal',
      subject,
      'WARN',
      'the journal has no records of this unit (Storage=none, or logs go elsewhere)',
      'let the engine log to stdout/stderr under systemd (the default) and keep journald storage on',
    );
  return result('journal', subject, 'PASS', 'journal readable (journalctl -u)');
}

/** What the drop-in write probe saw (test -w, nothing written). */
export interface DropInFacts {
  unitDirWritable: boolean;
  stateDirWritable: boolean;
  unitDir: string;
  stateDir: string;
}

// Rights to write the drop-in and the version history (tested with test -w, nothing written).
export function judgeDropIn(subject: string, f: DropInFacts, fixHint: string): CheckResult {
  const bad = [...(f.unitDirWritable ? [] : [f.unitDir]), ...(f.stateDirWritable ? [] : [f.stateDir])];
  if (bad.length)
    return result(
      'dropin',
      subject,
      'FAIL',
      `cannot write ${bad.join(' and ')} (the drop-in and its kept versions go there)`,
      fixHint,
      { ...f },
    );
  return result(
    'dropin',
    subject,
    'PASS',
    `can write ${f.unitDir} and ${f.stateDir} (checked with test -w; nothing written)`,
    null,
    { ...f },
  );
}

// Count and the exit code of a doctor run: 1 when anything FAILed.
export function summarizeChecks(checks: readonly CheckResult[]): {
  pass: number;
  warn: number;
  fail: number;
  skip: number;
  exitCode: 0 | 1;
} {
  const n = (s: CheckResult['status']) => checks.filter((c) => c.status === s).length;
  return { pass: n('PASS'), warn: n('WARN'), fail: n('FAIL'), skip: n('SKIP'), exitCode: n('FAIL') > 0 ? 1 : 0 };
}
