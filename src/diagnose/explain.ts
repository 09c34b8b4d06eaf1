// Assemble the verdict: class, confidence, summary, evidence lines, ruled-out alternatives, remediation, facts.
import type { TimelineItem } from './collector.js';
import { ruleOf, type Death, type Quote } from './death.js';
import type { RuleHit } from './lifetimes.js';
import { attributeStop, stopPhrase } from './attribution.js';
import { ALTERNATIVES, whyNot, whyOutranked, type ReasonFacts } from './reasons.js';
import { ALL_RULES } from './rules/index.js';
import { runningFacts } from './running.js';
import type { ServiceState } from './state.js';
import { summarize } from './summary.js';
import type { ActionRecord, DiagnosisClass, EvidenceLine, Remediation, Verdict } from './types.js';

/** What the verdict is about: one lifetime's end, or a loop of failed starts. */
export interface Incident {
  kind: 'single' | 'crash_loop';
  death: Death;
  deaths: Death[];
  failed: Death[];
  cause: DiagnosisClass | null;
}

/** Inputs of the explanation besides the incident. */
export interface ExplainContext {
  state: ServiceState | null;
  actions: ActionRecord[];
  unit: string | null;
  kernelChecked: boolean;
  hints: Map<string, number | null>;
  unowned: RuleHit[];
  suspicious: TimelineItem[];
}

/** Evidence lines quoted at most: enough to check the verdict, short enough to read. */
const MAX_EVIDENCE = 12;

// Deduplicate and order evidence lines by source and line.
function orderEvidence(quotes: Quote[], withSource: boolean): EvidenceLine[] {
  const seen = new Set<string>();
  const out: EvidenceLine[] = [];
  for (const q of [...quotes].sort((a, b) => a.source.localeCompare(b.source) || a.line - b.line)) {
    const key = `${q.source}:${q.line}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(withSource ? { line: q.line, text: q.text, source: q.source } : { line: q.line, text: q.text });
  }
  return out.slice(0, MAX_EVIDENCE);
}

// Remediation for a class: the decisive rule's, else the first rule of that class that matched, else the class default.
function remediationFor(d: Death, cls: DiagnosisClass): Remediation[] {
  if (cls === 'healthy' || cls === 'starting') return [];
  if (d.decisive && d.decisive.class === cls) return ruleOf(d.decisive).remediation;
  if (cls === 'clean_stop' && d.life.marks.exit?.fields.status !== '9') return [];
  if (cls === 'external_kill' && !d.life.hits.some((h) => h.ruleId === 'systemd.client_kill')) {
    return [
      {
        text: 'check the kernel log for an OOM kill first: journalctl -k | grep -i "killed process" (rerun diagnose with --kernel or --host)',
      },
      {
        text: 'then look for probes, watchdogs or scripts that kill -9 the service; stop it with `systemctl stop` so it can drain',
      },
    ];
  }
  const hit = d.life.hits.find((h) => h.class === cls && ruleOf(h).remediation.length);
  if (hit) return ruleOf(hit).remediation;
  const defaults: Partial<Record<DiagnosisClass, string>> = {
    stop_timeout: 'systemd.stop_sigterm_timeout',
    host_oom_kill: 'kernel.oom_killed_process',
    external_kill: 'systemd.client_kill',
    clean_stop: 'sglang.drain_complete',
  };
  const rule = ALL_RULES.find((r) => r.id === defaults[cls]);
  if (rule) return rule.remediation;
  return [
    {
      text: 'no rule explains this end: read the suspicious lines and the root exception; add --state and the kernel log (journalctl -k) for more evidence',
    },
  ];
}

// Facts worth keeping for the tuner and the report.
function factsOf(inc: Incident, ctx: ExplainContext): Record<string, string | number> {
  const d = inc.death;
  const l = d.life;
  const facts: Record<string, string | number> = { requests_served: l.requests };
  const drain = l.marks.drain?.fields;
  if (drain?.remaining) facts.remaining_requests = Number(drain.remaining);
  if (drain?.rids) facts.remaining_rids = drain.rids;
  const exit = l.marks.exit?.fields;
  if (exit) facts.exit = `code=${exit.code}, status=${exit.status}/${exit.name}`;
  if (l.marks.result) facts.result = l.marks.result.fields.result;
  const by = attributeStop(l, ctx.actions, ctx.hints);
  if (by) {
    facts.stop_by = by.by;
    facts.stop_action_ts = by.ts;
  }
  if (inc.kind === 'crash_loop') facts.failed_starts = inc.failed.length;
  const counter = inc.deaths
    .map((x) => x.life.marks.restart?.fields.counter)
    .filter(Boolean)
    .pop();
  if (counter) facts.restart_counter = Number(counter);
  if (ctx.state?.NRestarts !== null && ctx.state?.NRestarts !== undefined) facts.n_restarts = ctx.state.NRestarts;
  if (inc.kind === 'single' && (d.class === 'healthy' || d.class === 'starting'))
    Object.assign(facts, runningFacts(l, ctx.hints.get(l.source) ?? null));
  const kill =
    d.class === 'external_kill' || d.class === 'host_oom_kill'
      ? d.evidence.find((e) => e.source !== 'state' && Object.keys(e.fields).length)?.fields
      : undefined;
  for (const [k, v] of Object.entries(d.decisive?.fields ?? kill ?? {}))
    facts[k] = /^-?\d+(?:\.\d+)?$/.test(v) ? Number(v) : v;
  return facts;
}

// The ruled-out list: classes that matched a line but lost, then the usual suspects without evidence.
function ruledOutOf(inc: Incident, verdictClass: DiagnosisClass, rf: ReasonFacts): Verdict['ruledOut'] {
  const chosen = inc.cause ?? verdictClass;
  const out: Verdict['ruledOut'] = [];
  const seen = new Set<DiagnosisClass>([verdictClass, chosen]);
  for (const h of inc.death.life.hits) {
    if (!h.fatal || seen.has(h.class) || h.class === 'crash_loop') continue;
    seen.add(h.class);
    out.push({ class: h.class, why: whyOutranked(h.class, h.line, h.ruleId, chosen) });
  }
  const alternatives = [...(inc.kind === 'crash_loop' ? ALTERNATIVES.crash_loop : []), ...ALTERNATIVES[chosen]];
  for (const cls of alternatives) {
    if (seen.has(cls)) continue;
    seen.add(cls);
    out.push({ class: cls, why: whyNot(cls, rf) });
  }
  return out;
}

// Evidence for the verdict: the death's own lines, loop markers, and suspicious lines when nothing matched.
function evidenceOf(inc: Incident, ctx: ExplainContext): Quote[] {
  const d = inc.death;
  const quotes = [...d.evidence];
  if (inc.kind === 'crash_loop') {
    const marks = inc.deaths.flatMap((x) =>
      [x.life.marks.restart, x.life.marks.start_limit].filter(Boolean).map((s) => ({ ...s!, source: x.life.source })),
    );
    quotes.push(...marks.slice(0, 2), ...marks.slice(-2));
  }
  if (d.class === 'unknown' && d.crashed) {
    quotes.push(...ctx.suspicious.filter((s) => s.lifetime === d.life.id).slice(-8));
  }
  return quotes.filter((x) => x.line > 0 || x.source === 'state');
}

// Build the verdict of an incident.
export function explainVerdict(inc: Incident, ctx: ExplainContext): Verdict {
  const d = inc.death;
  const cls: DiagnosisClass = inc.kind === 'crash_loop' ? 'crash_loop' : d.class;
  const drain = d.life.marks.drain?.fields.remaining;
  const rf: ReasonFacts = {
    death: d,
    kernelChecked: ctx.kernelChecked,
    remaining: drain ? Number(drain) : null,
    failedStarts: inc.failed.length || (d.crashed ? 1 : 0),
    nRestarts: ctx.state?.NRestarts ?? null,
  };
  let confidence = d.confidence;
  if (d.class === 'external_kill' && confidence === 'low' && ctx.kernelChecked) confidence = 'medium';
  if (inc.kind === 'crash_loop') confidence = inc.cause === 'unknown' ? 'medium' : d.confidence;
  const stop = stopPhrase(d.life, ctx.actions, ctx.hints);
  const withSource = new Set(inc.deaths.map((x) => x.life.source)).size > 1;
  const remediation = remediationFor(d, inc.cause ?? cls);
  return {
    class: cls,
    cause: inc.kind === 'crash_loop' ? inc.cause : null,
    confidence,
    summary: summarize(inc, { stop, kernelChecked: ctx.kernelChecked, state: ctx.state, hints: ctx.hints }),
    evidence: orderEvidence(evidenceOf(inc, ctx), withSource),
    ruledOut: ruledOutOf(inc, cls, rf),
    remediation,
    crashed: inc.kind === 'crash_loop' || d.crashed,
    facts: factsOf(inc, ctx),
    detail: d.decisive ? (ruleOf(d.decisive).detail ?? null) : null,
  };
}
