// Turn what the collector gathered into one Diagnosis: judge every lifetime, spot crash loops, pick the incident.
import { ToolError } from '../errors.js';
import type { Collected } from './collector.js';
import { judgeLifetime, ruleOf, type Death, type DeathContext } from './death.js';
import { explainVerdict, type Incident } from './explain.js';
import { LifetimeTracker, type LifeState } from './lifetimes.js';
import { findGaps } from './gaps.js';
import type { ServiceState } from './state.js';
import { parseStamp, yearOf } from './time.js';
import { buildLifetimes, buildTimeline, pickRootException } from './outline.js';
import type { ActionRecord, DiagnosisClass, Diagnosis } from './types.js';

/** Everything besides the logs that the evaluator weighs. */
export interface EvaluateOptions {
  state: ServiceState | null;
  actions: ActionRecord[];
  unit: string | null;
  /** True when kernel lines were part of the input, so "no OOM-killer record" is a finding, not a blind spot. */
  kernelChecked: boolean;
  /** Judge the unit's last lifetime (live diagnose: what happened since its last start), not the latest failure. */
  lastLifetime?: boolean;
}

/** Failed starts in one window that make a crash loop (one failure followed by a restart is just a crash). */
const CRASH_LOOP_MIN_FAILURES = 2;

// Refuse only an input without a single non-blank line: any text is read (unrecognised text is engine output).
function assertNotEmpty(c: Collected): void {
  const text = c.sources.reduce((n, s) => n + s.formats.json + s.formats.journal + s.formats.plain + s.formats.meta, 0);
  if (text === 0) {
    const lines = c.sources.reduce((n, s) => n + s.lines, 0);
    throw new ToolError(
      'E_INPUT_UNUSABLE',
      lines ? `the input has only blank lines (${lines})` : 'the input is empty',
      {
        hint: 'pass the log text: a journal export (journalctl -u UNIT -o json), journalctl text, or engine output pasted from docker/kubectl/a file',
      },
    );
  }
}

// A lifetime spanning the whole first source, for inputs with only kernel or journal meta lines.
function wholeInputLife(c: Collected): LifeState {
  const src = c.sources[0];
  const life = new LifetimeTracker(src.name, () => 1).forApp(1, null, null, null);
  life.lastLine = src.lines;
  return life;
}

// Drop hits of rules written for another engine than the lifetime's dialect.
function keepDialectHits(life: LifeState): void {
  if (!life.dialect) return;
  life.hits = life.hits.filter((h) => {
    const e = ruleOf(h).engines;
    return !e || e.includes(life.dialect!);
  });
}

// Year hints per source, falling back to any source or the action log (journald short text has no year).
function yearHints(c: Collected, actions: ActionRecord[]): Map<string, number | null> {
  const any = c.sources.find((s) => s.yearHint !== null)?.yearHint ?? yearOf(actions[0]?.ts ?? null);
  return new Map(c.sources.map((s) => [s.name, s.yearHint ?? any]));
}

// The most frequent failure class among deaths (ties go to the latest).
function commonCause(deaths: Death[]): DiagnosisClass {
  const counts = new Map<DiagnosisClass, number>();
  for (const d of deaths) counts.set(d.class, (counts.get(d.class) ?? 0) + 1);
  let best: DiagnosisClass = deaths[deaths.length - 1].class;
  for (const [cls, n] of counts) if (n > (counts.get(best) ?? 0)) best = cls;
  return best;
}

// A crash loop: several starts that each failed, or systemd's start limit.
function findCrashLoop(deaths: Death[], c: Collected, state: ServiceState | null): Incident | null {
  const all = deaths.filter(
    (d) => d.crashed && (d.ended || d.decisive) && d.class !== 'stop_timeout' && d.class !== 'external_kill',
  );
  const perSource = new Map<string, Death[]>();
  for (const d of all) perSource.set(d.life.source, [...(perSource.get(d.life.source) ?? []), d]);
  const failed = [...perSource.values()].reduce<Death[]>((a, b) => (b.length > a.length ? b : a), []);
  const limit = c.lives.find((l) => l.marks.start_limit);
  const restarts = c.lives.filter((l) => l.marks.restart).length;
  // One lifetime that printed the same fatal line twice and was restarted (docker's "(restarting)") is a loop too.
  const repeated =
    failed.length === 1 &&
    restarts >= 1 &&
    failed[0].decisive !== null &&
    failed[0].life.hits.filter((h) => h.ruleId === failed[0].decisive!.ruleId).length >= CRASH_LOOP_MIN_FAILURES;
  const looping =
    limit ||
    repeated ||
    failed.length >= CRASH_LOOP_MIN_FAILURES ||
    (failed.length >= 1 && restarts >= 1 && (state?.NRestarts ?? 0) >= CRASH_LOOP_MIN_FAILURES);
  if (!looping || !failed.length) return null;
  const cause = commonCause(failed);
  const sample = [...failed].reverse().find((d) => d.class === cause)!;
  return { kind: 'crash_loop', death: sample, deaths, failed, cause };
}

// Epoch ms of a death's decisive line (for ordering nodes), or null.
function deathMs(d: Death, hints: Map<string, number | null>): number | null {
  const s = d.evidence[0];
  return s ? (parseStamp(s.ts, hints.get(s.source) ?? null)?.ms ?? null) : null;
}

// The incident: the earliest failure across nodes (the others are usually its echo), else the running process, else
// the latest stop.
function pickIncident(deaths: Death[], hints: Map<string, number | null>): Death {
  const failures = deaths.filter((d) => d.crashed);
  const lastPerSource = new Map<string, Death>();
  for (const d of failures) lastPerSource.set(d.life.source, d);
  const candidates = [...lastPerSource.values()];
  if (candidates.length > 1) {
    const timed = candidates.map((d) => ({ d, ms: deathMs(d, hints) }));
    if (timed.every((t) => t.ms !== null)) return timed.reduce((a, b) => (b.ms! < a.ms! ? b : a)).d;
  }
  if (candidates.length) return candidates[candidates.length - 1];
  // no failure: the current process (still running at the end) tells the state, not an earlier clean stop
  const current = deaths[deaths.length - 1];
  if (!current.ended) return current;
  const stops = deaths.filter((d) => d.ended);
  return stops[stops.length - 1] ?? deaths[deaths.length - 1];
}

// Live mode: the last lifetime of the unit (the first source) when it did not crash: an earlier failure in the
// window is history, not the state (an operator's stop after a healthy run is that stop, not an older OOM).
function pickLastLifetime(deaths: Death[], firstSource: string | undefined): Death | null {
  const own = deaths.filter((d) => d.life.source === firstSource);
  const last = own[own.length - 1];
  return last && !last.crashed ? last : null;
}

// "An earlier lifetime in the window (PID 412) ended with kv_cache_oom; ..." for the failures the verdict is not about.
function earlierFailures(deaths: Death[], chosen: Death): string {
  const failed = deaths.filter((d) => d.crashed && d.ended && d !== chosen && d.life.id < chosen.life.id);
  if (!failed.length) return '';
  const last = failed[failed.length - 1];
  const classes = [...new Set(failed.map((d) => d.class))].join(', ');
  const who = last.life.pid !== null ? ` (the last one PID ${last.life.pid})` : '';
  return ` ${failed.length === 1 ? 'An earlier lifetime' : `${failed.length} earlier lifetimes`} in the window ended with ${classes}${who}; the last start replaced ${failed.length === 1 ? 'it' : 'them'}, so this verdict is about the last lifetime (see lifetimes).`;
}

// Evaluate collected evidence into the public Diagnosis.
export function evaluate(c: Collected, opts: EvaluateOptions): Diagnosis {
  assertNotEmpty(c);
  if (!c.lives.length) c.lives.push(wholeInputLife(c));
  const hints = yearHints(c, opts.actions);
  for (const l of c.lives) keepDialectHits(l);
  const firstSource = c.sources[0]?.name;
  const own = c.lives.filter((l) => l.source === firstSource);
  const ctx: DeathContext = {
    unowned: c.unowned,
    state: opts.state,
    stateLife: own[own.length - 1]?.id ?? null,
    unit: opts.unit,
    yearHints: hints,
  };
  const deaths = c.lives.map((l) => judgeLifetime(l, ctx));
  const last = opts.lastLifetime ? pickLastLifetime(deaths, firstSource) : null;
  const loop = last ? null : findCrashLoop(deaths, c, opts.state);
  const incident: Incident = loop ?? {
    kind: 'single',
    death: last ?? pickIncident(deaths, hints),
    deaths,
    failed: [],
    cause: null,
  };
  const verdict = explainVerdict(incident, { ...opts, hints, unowned: c.unowned, suspicious: c.suspicious });
  if (last) verdict.summary += earlierFailures(deaths, last);
  const processMarkers = c.lives.some(
    (l) => l.pid !== null || l.sawStart || Boolean(l.marks.starting || l.marks.started || l.marks.engine_start),
  );
  Object.assign(
    verdict,
    findGaps({
      sources: c.sources,
      kernelChecked: opts.kernelChecked,
      hasState: opts.state !== null,
      unit: opts.unit,
      verdictClass: verdict.class,
      processMarkers,
    }),
  );
  const byId = new Map(deaths.map((d) => [d.life.id, d]));
  return {
    verdict,
    rootException: pickRootException(incident.death),
    timeline: buildTimeline(c, opts.actions, hints),
    lifetimes: buildLifetimes(c.lives, byId, c.sources.length > 1, hints),
    inputs: c.sources.map((s) => ({
      name: s.name,
      lines: s.lines,
      recognised: s.recognised,
      formats: { ...s.formats },
    })),
  };
}
