// Pure text rendering of service-control results and events for the CLI (secrets redacted).
import type { Diagnosis, Verdict } from '../diagnose/index.js';
import type { EngineSettings } from '../engines/types.js';
import { redactText } from '../redact.js';
import type { ServiceStatus } from './controller.js';
import type { ServiceEvent } from './events.js';
import { formatUnitView } from './unit-view.js';

// "k=v k=v" of engine settings, sorted.
export function formatSettings(s: EngineSettings): string {
  return (
    Object.keys(s)
      .sort()
      .map((k) => `${k}=${s[k]}`)
      .join(' ') || '(none read)'
  );
}

// `spectune status` of a group: each rank's lines under a "rankN" head; a worker's health line says it has none;
// then a warning for each difference between the ranks (and for a group the target lists only in part).
export function formatGroupStatus(
  ranks: (ServiceStatus & { rank: number })[],
  g: { differences?: string[]; incomplete?: string | null } = {},
): string {
  const warnings = [
    ...(g.differences?.length
      ? [
          `warning: the ranks run different configs: ${g.differences.join('; ')}`,
          '  (a change applied to one rank alone, or a failed rank; `spectune apply` without --rank changes every rank)',
        ]
      : []),
    ...(g.incomplete ? [`warning: ${g.incomplete}`] : []),
  ];
  return (
    ranks
      .map((r) => {
        const text = formatStatus(r).split('\n');
        const lines =
          r.rank === 0
            ? text
            : text.map((l) =>
                l.startsWith('  health: ') ? '  health: not asked (a worker rank serves no HTTP; active = up)' : l,
              );
        return `rank${r.rank}: ${lines.join('\n')}`;
      })
      .join('') + (warnings.length ? redactText(`${warnings.join('\n')}\n`) : '')
  );
}

// `spectune status` as a few lines.
export function formatStatus(
  st: ServiceStatus & { lock?: { text: string } | null; campaigns?: { text: string }[] },
): string {
  const s = st.state;
  const lines = [
    `${st.host} ${st.unit}: ${s.activeState} (${s.subState}), pid ${s.mainPid ?? '-'}, restarts ${s.nRestarts ?? '-'}, result ${s.result || '-'}`,
    `  drop-in: ${st.dropIn || st.view.spectunePath ? `spectune's (version ${st.versions.current ?? '?'}, known-good ${st.versions.good ?? 'not recorded'})${st.view.trial ? ', candidate in force (provisional)' : ''}${st.view.overrides.length ? `, OVERRIDDEN by ${[...new Set(st.view.overrides.map((o) => o.path))].join(', ')}` : ''}` : "none (the operator's unit as written)"}`,
    `  engine settings in force: ${formatSettings(st.settings)}`,
    ...formatUnitView(st.view),
    ...(st.lock !== undefined ? [`  lock: ${st.lock ? `held by ${st.lock.text}` : 'free'}`] : []),
    ...(st.campaigns
      ? st.campaigns.length
        ? st.campaigns.map((c) => `  campaign: ${c.text}`)
        : ['  campaign: none running']
      : []),
    `  health: ${st.health.url} -> ${st.health.status ?? st.health.error ?? 'no answer'}${st.health.ok ? ' (ok)' : ''}`,
  ];
  if ((s.nRestarts ?? 0) > 0) {
    lines.push(
      `  warning: systemd restarted it ${s.nRestarts} time(s) since it was last started by hand: a crash loop can look "active" (see \`spectune logs\`)`,
    );
  }
  return redactText(`${lines.join('\n')}\n`);
}

// A verdict with its evidence and, when known, the root exception.
export function formatVerdict(v: Verdict, d: Diagnosis | null): string {
  const head = `${v.class}${v.cause ? ` (cause: ${v.cause})` : ''} [${v.confidence}]: ${v.summary}`;
  const lines = [head];
  const root = d?.rootException;
  if (root) {
    lines.push(`  root exception: ${root.type}: ${root.message}`);
    for (const f of root.frames.slice(-4)) lines.push(`    at ${f.file}:${f.line} in ${f.func}`);
  }
  for (const e of v.evidence.slice(0, 6)) lines.push(`  evidence: ${e.text}`);
  for (const r of v.remediation.slice(0, 3)) lines.push(`  fix: ${r.text}`);
  return redactText(`${lines.join('\n')}\n`);
}

// One progress line for a service event (null: not shown); takes any event of the stream, so it can be a whole sink.
export function formatServiceEvent(event: ServiceEvent | { type: string; ts: number }, now?: number): string | null {
  const e = event as ServiceEvent;
  if (e.type === 'service:drain') {
    const left = Math.max(0, Math.ceil((e.deadlineTs - (now ?? e.ts)) / 1000));
    const clock = left >= 60 ? `${Math.floor(left / 60)}m${String(left % 60).padStart(2, '0')}s` : `${left}s`;
    return `spectune: ${e.unit}: draining before the stop: ${e.running} running, ${e.queued} queued; stopping anyway in ${clock} (--drain-timeout)${e.note ? `; ${e.note}` : ''}`;
  }
  if (e.type === 'service:action') return `spectune: ${e.unit}: ${e.action} (${e.why})`;
  if (e.type === 'service:ready') return `spectune: ${e.unit}: ready after ${(e.elapsedMs / 1000).toFixed(1)} s`;
  if (e.type === 'service:failed') return `spectune: ${e.unit}: start failed: ${e.reason}`;
  if (e.type === 'log') return `spectune: ${e.level === 'info' ? '' : `${e.level}: `}${e.message}`;
  return null;
}
