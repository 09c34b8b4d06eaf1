// Live mode of diagnose: read a unit's journal on a host and stream it through the diagnoser line by line,
// so a journal of gigabytes costs no more memory than a short one.
import { createDiagnoser, createLineSplitter, type ActionRecord, type Diagnosis } from '../diagnose/index.js';
import type { EngineName } from '../engines/types.js';
import { ToolError } from '../errors.js';
import { expectOk, type CommandResult, type Host } from '../host/index.js';

/** What live mode reads besides the unit journal: small enough to fetch whole. */
export interface LiveContext {
  /** `systemctl show UNIT`. */
  state: string;
  /** OOM-killer and NVRM lines of `journalctl -k` (JSON lines), the latest ones when there are many. */
  kernelLines: string;
}

/** What to diagnose live. */
export interface LiveRequest {
  unit: string;
  since: string;
  engine?: EngineName;
  actions?: ActionRecord[];
  /** Give up when the journal sends nothing for this long (default LIVE_IDLE_MS). */
  idleMs?: number;
  /** Judge the unit's last lifetime (the `diagnose --unit` question: what is it now), not the latest failure. */
  lastLifetime?: boolean;
}

/** Kernel lines worth keeping from `journalctl -k`: OOM killer and NVIDIA driver records. */
const KERNEL_KEEP = /Out of memory|out of memory|oom-kill|oom_reaper|invoked oom-killer|NVRM|Xid/;
/** Kernel lines kept at most (the latest win): an OOM storm must not cost unbounded memory either. */
const MAX_KERNEL_LINES = 2000;
/** Time budget of the short commands (systemctl show). */
const LIVE_TIMEOUT_MS = 120_000;
/**
 * The journal is streamed without a total time limit (a busy unit's export takes minutes), but a stream that
 * delivers nothing for this long is a hung ssh session or journalctl, not a slow one.
 */
export const LIVE_IDLE_MS = 120_000;

// Run a command and hand its stdout over chunk by chunk; throws the usual coded errors when it failed.
// Hosts without `stream` (test fakes) fall back to exec and deliver one chunk.
export async function streamStdout(
  host: Host,
  argv: string[],
  what: string,
  onChunk: (c: Buffer) => void,
  idleMs = LIVE_IDLE_MS,
): Promise<void> {
  if (!host.stream) {
    const r = expectOk(await host.exec(argv, { timeoutMs: LIVE_TIMEOUT_MS }), what);
    if (r.stdout) onChunk(Buffer.from(r.stdout));
    return;
  }
  const started = Date.now();
  const s = host.stream(argv);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    s.kill();
  }, idleMs);
  try {
    for await (const chunk of s.stdout) {
      timer.refresh();
      onChunk(chunk as Buffer);
    }
  } catch (e) {
    s.kill();
    throw e;
  } finally {
    clearTimeout(timer);
  }
  const end = await s.exited;
  const r: CommandResult = {
    host: host.name,
    argv,
    exitCode: end.exitCode,
    signal: timedOut ? null : end.signal,
    timedOut,
    durationMs: Date.now() - started,
    stdout: '',
    stderr: end.stderr,
  };
  if (timedOut)
    throw new ToolError('E_TIMEOUT', `${host.name}: ${what} sent nothing for ${idleMs / 1000} s`, {
      hint: 'the host or journalctl hangs; retry, or narrow --since',
    });
  expectOk(r, what);
}

// Read `systemctl show` and the kernel's OOM/Xid lines (streamed and filtered: `journalctl -k` can be large too).
export async function collectLiveContext(host: Host, unit: string, since: string): Promise<LiveContext> {
  const show = expectOk(
    await host.exec(['systemctl', 'show', unit, '--no-pager'], { timeoutMs: LIVE_TIMEOUT_MS }),
    `systemctl show ${unit}`,
  ).stdout;
  if (/^LoadState=not-found$/m.test(show)) {
    throw new ToolError('E_UNIT_NOT_FOUND', `${host.name}: unit ${unit} not found`, {
      hint: 'check the unit name with `systemctl list-units`',
    });
  }
  const kept: string[] = [];
  const splitter = createLineSplitter((line) => {
    if (!KERNEL_KEEP.test(line)) return;
    kept.push(line);
    if (kept.length > MAX_KERNEL_LINES * 2) kept.splice(0, kept.length - MAX_KERNEL_LINES);
  });
  try {
    await streamStdout(host, ['journalctl', '-k', '-o', 'json', '--since', since, '--no-pager'], 'journalctl -k', (c) =>
      splitter.push(c),
    );
    splitter.end();
  } catch (e) {
    // the kernel log is optional evidence (a non-root user may not read it); an unreachable host is not
    if (!(e instanceof ToolError) || !['E_REMOTE_COMMAND', 'E_NO_PERMISSION'].includes(e.code)) throw e;
    kept.length = 0;
  }
  return { state: show, kernelLines: kept.slice(-MAX_KERNEL_LINES).join('\n') };
}

// Diagnose a unit on a host: context first, then the journal streamed through the diagnoser.
export async function diagnoseUnit(host: Host, req: LiveRequest): Promise<Diagnosis> {
  const ctx = await collectLiveContext(host, req.unit, req.since);
  const d = createDiagnoser({
    engine: req.engine,
    actions: req.actions,
    unit: req.unit,
    state: ctx.state,
    kernelLines: ctx.kernelLines || undefined,
    lastLifetime: req.lastLifetime,
  });
  const name = `${host.name}:${req.unit}`;
  let text = false;
  const argv = ['journalctl', '-u', req.unit, '-o', 'json', '--since', req.since, '--no-pager'];
  await streamStdout(
    host,
    argv,
    `journalctl -u ${req.unit}`,
    (c) => {
      text ||= c.some((b) => b > 32);
      d.push(name, c);
    },
    req.idleMs,
  );
  if (!text)
    throw new ToolError('E_INPUT_UNUSABLE', `${host.name}: no journal entries for ${req.unit} since "${req.since}"`, {
      hint: 'widen --since',
    });
  return d.finish();
}
