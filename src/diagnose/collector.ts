// The streaming half of diagnose: every line of every source goes through here once; only bounded facts are kept.
import { ENGINE_NAMES } from '../engines/registry.js';
import { detach, detachAll } from './detach.js';
import { bare, isRoutine, quote, SUSPICIOUS } from './line-kinds.js';
import { LifetimeTracker, type LifeState, type RuleHit, type Sighting } from './lifetimes.js';
import { createLineSplitter, type LineSplitter } from './lines.js';
import { readAppMarker, readKernelMarker, readSystemdMarker, type Marker } from './markers.js';
import { APP_FAILURE_CLASSES, type RuleMatcher } from './matcher.js';
import { stripAppPrefix, type AppLine, type Dialect } from './prefix.js';
import { parseLine, type JournalEntry, type LineFormat, type LogRecord } from './records.js';
import { yearOf } from './time.js';
import { TracebackAssembler, type TracebackChain } from './traceback.js';

/** A timeline event before evaluation. */
export interface TimelineItem extends Sighting {
  source: string;
  pid: number | null;
  kind: string;
  lifetime: number | null;
}

/** What one input source looked like. */
export interface SourceSummary {
  name: string;
  lines: number;
  recognised: number;
  formats: Record<LineFormat, number>;
  yearHint: number | null;
  /** Kernel lines seen (journalctl -k mixed in): then "no OOM-killer record" is a finding. */
  kernelLines: number;
  /** Lines written by systemd (PID 1) about a unit: without them a stop cannot be told from a crash. */
  systemdLines: number;
  /** Lines that carried a timestamp (journal or engine prefix). */
  stampedLines: number;
  /** First timestamp text seen, for the "collect next" commands. */
  firstTs: string | null;
}

/** Everything the evaluator needs, gathered in one pass. */
export interface Collected {
  sources: SourceSummary[];
  lives: LifeState[];
  /** Hits on lines that belong to no lifetime (kernel lines: OOM killer, NVRM Xid). */
  unowned: RuleHit[];
  timeline: TimelineItem[];
  suspicious: TimelineItem[];
  dialects: Record<Dialect, number>;
}

/** Bounds: timeline events kept at the start and at the end, suspicious lines, kernel hits, chains per lifetime. */
const TIMELINE_HEAD = 150;
const TIMELINE_TAIL = 350;
const MAX_SUSPICIOUS = 40;
const MAX_UNOWNED = 200;
const MAX_CHAINS_PER_LIFE = 6;
interface SourceState {
  summary: SourceSummary;
  splitter: LineSplitter;
  tracker: LifetimeTracker;
  dialect: Dialect | null;
}

/** Streaming collector over several named sources. */
export class Collector {
  private readonly sources = new Map<string, SourceState>();
  private readonly timelineHead: TimelineItem[] = [];
  private timelineTail: TimelineItem[] = [];
  private readonly suspicious: TimelineItem[] = [];
  private readonly unowned: RuleHit[] = [];
  private readonly dialects = Object.fromEntries(ENGINE_NAMES.map((n) => [n, 0])) as Record<Dialect, number>;
  private readonly tracebacks: TracebackAssembler;
  private lifeIds = 0;

  constructor(
    private readonly matcher: RuleMatcher,
    private readonly unit: string | null,
  ) {
    this.tracebacks = new TracebackAssembler((c) => this.keepChain(c));
  }

  // Feed a chunk of one source (sources may interleave freely).
  push(source: string, chunk: Buffer | string): void {
    this.sourceFor(source).splitter.push(chunk);
  }

  // Feed journal entries read already (their fields kept: unit, transport, host, time with its year), one line each.
  pushEntries(source: string, entries: readonly JournalEntry[]): void {
    const src = this.sourceFor(source);
    for (const e of entries) this.onEntry(src, e, ++src.summary.lines);
  }

  // End of all input: flush partial lines and open tracebacks.
  finish(): Collected {
    for (const s of this.sources.values()) {
      s.splitter.end();
      s.tracker.seal();
    }
    this.tracebacks.flush();
    const all = [...this.sources.values()];
    return {
      sources: all.map((s) => s.summary),
      lives: all.flatMap((s) => s.tracker.lives),
      unowned: this.unowned,
      timeline: [...this.timelineHead, ...this.timelineTail.slice(-TIMELINE_TAIL)],
      suspicious: this.suspicious.slice(-MAX_SUSPICIOUS),
      dialects: this.dialects,
    };
  }

  private sourceFor(name: string): SourceState {
    let s = this.sources.get(name);
    if (!s) {
      const summary: SourceSummary = {
        name,
        lines: 0,
        recognised: 0,
        formats: { json: 0, journal: 0, plain: 0, meta: 0 },
        yearHint: null,
        kernelLines: 0,
        systemdLines: 0,
        stampedLines: 0,
        firstTs: null,
      };
      const state: SourceState = {
        summary,
        splitter: null as unknown as LineSplitter,
        tracker: new LifetimeTracker(name, () => ++this.lifeIds),
        dialect: null,
      };
      state.splitter = createLineSplitter((line) => this.onLine(state, line));
      this.sources.set(name, state);
      s = state;
    }
    return s;
  }

  private onLine(src: SourceState, raw: string): void {
    const sum = src.summary;
    const lineNo = ++sum.lines;
    if (!raw) return;
    this.onEntry(src, parseLine(raw), lineNo);
  }

  private onEntry(src: SourceState, rec: JournalEntry, lineNo: number): void {
    const sum = src.summary;
    sum.formats[rec.format]++;
    if (rec.format === 'meta') {
      sum.recognised++;
      return;
    }
    const app = rec.origin === 'app' ? stripAppPrefix(rec.message) : bare(rec.message);
    const ts = rec.ts ?? app.appTs;
    sum.yearHint ??= yearOf(rec.ts) ?? yearOf(app.appTs);
    if (ts) {
      sum.stampedLines++;
      sum.firstTs ??= detach(ts);
    }
    if (rec.origin === 'systemd') sum.systemdLines++;
    if (rec.format !== 'plain' || app.prefixed) sum.recognised++;
    if (rec.origin === 'kernel') {
      sum.kernelLines++;
      return this.onKernel(src, lineNo, ts, app.text);
    }
    // With --unit, lines about (systemd) or from (journal JSON) another unit are not this service's story.
    if (this.unit && rec.unit && rec.unit !== this.unit && rec.unit !== 'init.scope') return;
    if (app.dialect) {
      src.dialect = app.dialect;
      this.dialects[app.dialect]++;
    }
    this.onServiceLine(src, rec, app, lineNo, ts);
  }

  private onServiceLine(src: SourceState, rec: LogRecord, app: AppLine, lineNo: number, ts: string | null): void {
    const text = app.text;
    const isApp = rec.origin === 'app';
    const marker = isApp ? readAppMarker(text, src.dialect) : readSystemdMarker(text);
    const life = isApp ? src.tracker.forApp(lineNo, ts, rec.pid, marker) : src.tracker.forSystemd(lineNo, ts, marker);
    if (isApp) {
      src.tracker.noteDialect(life, app.dialect);
      this.tracebacks.feed(`${src.summary.name}|${rec.pid ?? ''}|${app.tag ?? ''}`, lineNo, app, life.id);
    }
    if (marker)
      this.onMarker(
        src,
        life,
        marker,
        { line: lineNo, ts: ts && detach(ts), text: quote(text), fields: detachAll(marker.fields) },
        rec.pid,
      );
    // Indented 4+ spaces = a traceback's source line: code quoting a message is not the message.
    if (text.startsWith('    ') || isRoutine(text)) return;
    const cleared = this.matcher.clearedRules(text);
    if (cleared) life.hits = life.hits.filter((h) => !cleared.has(h.ruleId));
    const matches = this.matcher.match(text);
    if (!matches.length) {
      if (isApp && SUSPICIOUS.test(text))
        this.pushBounded(
          this.suspicious,
          this.item(src, lineNo, ts, rec.pid, 'suspicious', text, life.id),
          MAX_SUSPICIOUS,
        );
      return;
    }
    if (rec.format === 'plain' && !app.prefixed) src.summary.recognised++;
    for (const m of matches) {
      const hit: RuleHit = {
        ruleId: m.rule.id,
        class: m.rule.class,
        fatal: m.rule.fatal !== false,
        source: src.summary.name,
        lifetime: life.id,
        line: lineNo,
        ts: ts && detach(ts),
        text: quote(text),
        fields: detachAll(m.facts),
      };
      const firstOfClass = hit.fatal && !life.hits.some((h) => h.class === hit.class && h.fatal);
      src.tracker.addHit(life, hit);
      if (firstOfClass && APP_FAILURE_CLASSES.has(hit.class))
        this.addTimeline(this.item(src, lineNo, ts, rec.pid, `error:${hit.class}`, text, life.id));
    }
  }

  private onMarker(src: SourceState, life: LifeState, marker: Marker, s: Sighting, pid: number | null): void {
    const firstRequest = marker.kind === 'request' && life.requests === 0;
    src.tracker.mark(life, marker, s);
    if (marker.kind === 'request' && !(firstRequest && life.requests === 1)) return;
    const kind = marker.kind === 'request' ? 'first_request' : marker.kind;
    this.addTimeline({ ...s, source: src.summary.name, pid, kind, lifetime: life.id });
  }

  private onKernel(src: SourceState, lineNo: number, ts: string | null, text: string): void {
    const marker = readKernelMarker(text);
    if (marker) this.addTimeline(this.item(src, lineNo, ts, null, 'oom_kill', text, null));
    for (const m of this.matcher.match(text)) {
      const hit: RuleHit = {
        ruleId: m.rule.id,
        class: m.rule.class,
        fatal: m.rule.fatal !== false,
        source: src.summary.name,
        lifetime: null,
        line: lineNo,
        ts: ts && detach(ts),
        text: quote(text),
        fields: detachAll(m.facts),
      };
      if (!marker && m.rule.class !== 'host_oom_kill')
        this.addTimeline(this.item(src, lineNo, ts, null, `error:${hit.class}`, text, null));
      this.pushBounded(this.unowned, hit, MAX_UNOWNED);
    }
  }

  private keepChain(c: TracebackChain): void {
    let life: LifeState | null = null;
    for (const s of this.sources.values()) if ((life = s.tracker.find(c.owner))) break;
    if (life && life.chains.length < MAX_CHAINS_PER_LIFE) life.chains.push(c);
  }

  private item(
    src: SourceState,
    line: number,
    ts: string | null,
    pid: number | null,
    kind: string,
    text: string,
    lifetime: number | null,
  ): TimelineItem {
    return { source: src.summary.name, line, ts: ts && detach(ts), pid, kind, text: quote(text), fields: {}, lifetime };
  }

  private addTimeline(t: TimelineItem): void {
    if (this.timelineHead.length < TIMELINE_HEAD) {
      this.timelineHead.push(t);
      return;
    }
    this.timelineTail.push(t);
    if (this.timelineTail.length > TIMELINE_TAIL * 2) this.timelineTail = this.timelineTail.slice(-TIMELINE_TAIL);
  }

  private pushBounded<T>(list: T[], v: T, max: number): void {
    list.push(v);
    if (list.length > max * 2) list.splice(0, list.length - max);
  }
}
