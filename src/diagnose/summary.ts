// One paragraph that says what happened, with the numbers an operator checks first.
import { getEngine } from '../engines/registry.js';
import type { Incident } from './explain.js';
import { ruleOf, type Death } from './death.js';
import { summarizeRunning } from './running.js';
import type { ServiceState } from './state.js';

/** Inputs of the summary besides the incident. */
export interface SummaryContext {
  stop: string;
  kernelChecked: boolean;
  state: ServiceState | null;
  /** Year per source, for yearless journald stamps. */
  hints: Map<string, number | null>;
}

// "48 requests" / "1 request".
function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

// The engine's name for sentences.
function engineOf(d: Death): string {
  return d.life.dialect ? getEngine(d.life.dialect).displayName : 'the engine';
}

// A process still running whose state the input cannot tell: an exception printed, or too few lines.
function unknownRunning(d: Death): string {
  const raised = d.evidence[0];
  if (raised && d.life.chains.length) {
    return `No exit seen, but the process printed an exception (\`${raised.text.slice(0, 160)}\`, line ${raised.line}) and is still running at the end of the input: check that it still serves (SGLang's HTTP server can outlive a dead scheduler).`;
  }
  return 'No failure seen, but no start, ready line or served request either: the input shows too little of the process to tell whether it is healthy.';
}

// What the input shows of the lifetime's service: "never became ready" only when its start is in the input and
// nothing was served or in flight (a paste of a runtime error or of a drain cannot say that).
function servedSentence(d: Death, inFlight: number): string {
  const l = d.life;
  if (l.ready || l.requests > 0) return `It had served ${plural(l.requests, 'request')}.`;
  if (inFlight > 0) return `It had ${plural(inFlight, 'request')} in flight, so it had been serving.`;
  return l.sawStart
    ? 'It never became ready.'
    : 'The input does not show its start, so whether it had become ready is not known.';
}

// Summary of a single lifetime's end.
function summarizeDeath(d: Death, c: SummaryContext): string {
  const l = d.life;
  const drain = l.marks.drain?.fields;
  const served = servedSentence(d, Number(drain?.remaining ?? 0));
  switch (d.class) {
    case 'stop_timeout': {
      const n = drain
        ? `${engineOf(d)} was still draining ${plural(Number(drain.remaining), 'request')}${drain.rids ? ` (${drain.rids.slice(0, 80)}${drain.rids.length > 80 ? '…' : ''})` : ''}`
        : 'the process had not exited';
      return `Stop timeout, not a crash: ${c.stop} did not finish in time — ${n} when systemd's TimeoutStopSec expired (\`State 'stop-sigterm' timed out. Killing.\`) and it sent SIGKILL. ${served}`;
    }
    case 'clean_stop': {
      const note = l.dialect ? getEngine(l.dialect).logDialect.cleanStopSigkillNote : undefined;
      const trap = l.marks.exit?.fields.status === '9' && note ? ` ${note}` : '';
      return `Clean stop after ${c.stop}: the engine finished its requests and exited.${trap} ${served}`;
    }
    case 'host_oom_kill': {
      const v = d.oom.find((o) => o.fields.victim_pid);
      const who = v ? ` process ${v.fields.victim_pid} (${v.fields.victim_comm})` : ' a process of the unit';
      const scope =
        v?.fields.scope === 'Memory cgroup out of memory' ? ' because the cgroup memory limit was reached' : '';
      const loose =
        d.confidence === 'high'
          ? ''
          : ' The record is tied to this service by time only (another PID, no cgroup named): check `journalctl -k` around the exit.';
      return `Host OOM kill: the kernel OOM killer killed${who}${scope}. Host RAM ran out — this is not a GPU out-of-memory.${loose} ${served}`;
    }
    case 'external_kill': {
      const exit = l.marks.exit?.fields;
      const sig = exit ? `status=${exit.status}/${exit.name}` : 'a signal';
      const blind = c.kernelChecked
        ? 'the kernel log has no OOM-killer record'
        : 'no kernel log was given, so an OOM kill cannot be excluded (add journalctl -k lines)';
      return `Killed from outside (${sig}) without a stop job timing out; ${blind}. Exit 137/SIGKILL alone does not prove an OOM. ${served}`;
    }
    case 'healthy':
    case 'starting':
      return summarizeRunning(d.class, l, c.hints.get(l.source) ?? null);
    case 'unknown':
      if (!d.ended) return unknownRunning(d);
      return `The process ended (${l.marks.exit?.text ?? 'no exit record'}) but no rule explains why; the most suspicious lines are quoted.`;
    default: {
      const rule = d.decisive ? ruleOf(d.decisive) : null;
      return `${rule?.title ?? d.class}: \`${d.decisive?.text.slice(0, 160) ?? ''}\` (line ${d.decisive?.line}). ${served}`;
    }
  }
}

// Summary of the incident.
export function summarize(inc: Incident, c: SummaryContext): string {
  if (inc.kind === 'single') return summarizeDeath(inc.death, c);
  const st = c.state;
  const active =
    st?.ActiveState === 'active'
      ? ` (systemctl shows "${st.ActiveState} (${st.SubState})" between attempts — misleading during a loop)`
      : '';
  const restarts = st?.NRestarts ? `; NRestarts=${st.NRestarts}` : '';
  return `Crash loop: ${plural(inc.failed.length, 'start')} in this window died, each of ${inc.cause}${restarts}${active}. Last attempt: ${summarizeDeath(inc.death, c)}`;
}
