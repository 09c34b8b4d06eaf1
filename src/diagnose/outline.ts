// The descriptive parts of a Diagnosis: root exception, timeline and lifetimes.
import type { Collected, TimelineItem } from './collector.js';
import type { Death } from './death.js';
import type { LifeState } from './lifetimes.js';
import { formatStamp, parseStamp } from './time.js';
import type { TracebackChain } from './traceback.js';
import type { ActionRecord, Lifetime, RootException, TimelineEntry } from './types.js';

/** Exceptions that only wrap the real one printed earlier ("See root cause above"). */
const WRAPPER =
  /See root cause above|EngineDeadError|EngineCore encountered an issue|Engine core initialization failed/;

// The root exception: the first block of the chain holding the decisive line, else the first non-wrapper chain.
export function pickRootException(d: Death): RootException | null {
  if (!d.crashed && d.class === 'clean_stop') return null;
  const chains = d.life.chains.filter((c) => c.blocks[0]?.type);
  const line = d.decisive?.line;
  const holding = line === undefined ? undefined : chains.find((c) => line >= c.firstLine && line <= c.lastLine);
  const chosen: TracebackChain | undefined =
    holding ?? chains.find((c) => !WRAPPER.test(`${c.blocks[0].type}: ${c.blocks[0].message}`));
  if (!chosen) return null;
  const root = chosen.blocks[0];
  return { type: root.type, message: root.message, frames: root.frames.map((f) => ({ ...f })) };
}

// Timeline entry from a collected item.
function entryOf(t: TimelineItem, hints: Map<string, number | null>): TimelineEntry {
  const ts = formatStamp(parseStamp(t.ts, hints.get(t.source) ?? null)) ?? t.ts;
  return { ts, line: t.line, pid: t.pid, kind: t.kind, text: t.text };
}

// The last request of each lifetime (the first one is logged as it happens).
function lastRequests(lives: LifeState[]): TimelineItem[] {
  return lives
    .filter((l) => l.lastRequest && l.requests > 1)
    .map((l) => ({
      ...l.lastRequest!,
      source: l.source,
      pid: l.pid,
      kind: 'last_request',
      lifetime: l.id,
      text: `${l.lastRequest!.text} (request ${l.requests} of this process)`,
    }));
}

// Action-log entries (who stopped/started the unit), as timeline entries without a line.
function actionEntries(actions: ActionRecord[]): TimelineEntry[] {
  return actions.map((a) => ({
    ts: a.ts,
    line: 0,
    pid: null,
    kind: `action:${a.action}`,
    text: `${a.action} ${a.unit} by ${a.by}${a.why ? ` (${a.why})` : ''}`,
  }));
}

// Merge action entries into the line-ordered timeline by time.
function mergeByTime(lines: TimelineEntry[], actions: TimelineEntry[]): TimelineEntry[] {
  const out: TimelineEntry[] = [];
  const rest = [...actions].sort((a, b) => Date.parse(a.ts!) - Date.parse(b.ts!));
  for (const e of lines) {
    const t = e.ts ? Date.parse(e.ts.endsWith('Z') ? e.ts : `${e.ts}Z`) : NaN;
    while (rest.length && Number.isFinite(t) && Date.parse(rest[0].ts!) <= t) out.push(rest.shift()!);
    out.push(e);
  }
  return [...out, ...rest];
}

// Collapse runs of identical drain progress lines (every 5 s) to their first and last line.
function collapseDrains(items: TimelineItem[]): TimelineItem[] {
  return items.filter((t, i) => {
    if (t.kind !== 'drain') return true;
    const prev = items[i - 1];
    const next = items[i + 1];
    const same = (o: TimelineItem | undefined) =>
      o?.kind === 'drain' && o.fields.remaining === t.fields.remaining && o.source === t.source;
    return !(same(prev) && same(next));
  });
}

// The timeline: lifecycle markers and first errors in input order, with the action log merged by time.
export function buildTimeline(
  c: Collected,
  actions: ActionRecord[],
  hints: Map<string, number | null>,
): TimelineEntry[] {
  const order = new Map(c.sources.map((s, i) => [s.name, i]));
  const items = [...c.timeline, ...lastRequests(c.lives)].sort(
    (a, b) => order.get(a.source)! - order.get(b.source)! || a.line - b.line,
  );
  return mergeByTime(
    collapseDrains(items).map((t) => entryOf(t, hints)),
    actionEntries(actions),
  );
}

// How a lifetime ended, in one phrase.
function exitText(l: LifeState): string | null {
  const e = l.marks.exit;
  if (e)
    return `${e.fields.code} ${e.fields.status}/${e.fields.name}${l.marks.result ? `, result ${l.marks.result.fields.result}` : ''}`;
  if (l.marks.result) return `result ${l.marks.result.fields.result}`;
  return l.marks.app_exit ? 'exited' : null;
}

// Public lifetimes (with the source only when there are several inputs).
export function buildLifetimes(
  lives: LifeState[],
  deaths: Map<number, Death>,
  withSource: boolean,
  hints: Map<string, number | null>,
): Lifetime[] {
  return lives.map((l) => {
    const d = deaths.get(l.id);
    const ts = (t: string | null) => formatStamp(parseStamp(t, hints.get(l.source) ?? null)) ?? t;
    const out: Lifetime = {
      pid: l.pid,
      firstLine: l.firstLine,
      lastLine: l.lastLine,
      start: ts(l.startTs),
      end: ts(l.endTs),
      ready: Boolean(l.ready),
      requestsServed: l.requests,
      exit: exitText(l),
      cause: d?.crashed ? d.class : null,
    };
    if (withSource) out.source = l.source;
    return out;
  });
}
