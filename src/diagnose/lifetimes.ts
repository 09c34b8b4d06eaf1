// Split one input into process lifetimes (PID changes, systemd start markers, exits) and record what each lived.
import { getEngine } from '../engines/registry.js';
import { detach } from './detach.js';
import type { Marker } from './markers.js';
import { isGenerationPath } from './markers.js';
import type { Dialect } from './prefix.js';
import type { TracebackChain } from './traceback.js';
import type { DiagnosisClass } from './types.js';

/** A line kept as evidence: where it is and what it says. */
export interface Sighting {
  line: number;
  ts: string | null;
  text: string;
  fields: Record<string, string>;
}

/** A rule that matched a line, with the facts its named groups extracted. */
export interface RuleHit extends Sighting {
  ruleId: string;
  class: DiagnosisClass;
  fatal: boolean;
  source: string;
  lifetime: number | null;
}

/** Everything diagnose learned about one process lifetime (internal, richer than the public Lifetime). */
export interface LifeState {
  id: number;
  source: string;
  pid: number | null;
  firstLine: number;
  lastLine: number;
  startTs: string | null;
  endTs: string | null;
  dialect: Dialect | null;
  sawStart: boolean;
  appLines: number;
  ready: Sighting | null;
  requests: number;
  firstRequest: Sighting | null;
  lastRequest: Sighting | null;
  marks: Partial<Record<Marker['kind'], Sighting>>;
  drainCount: number;
  hits: RuleHit[];
  /** Tracebacks printed during this lifetime (the first few). */
  chains: TracebackChain[];
}

/** Rule hits kept per lifetime: the first ones explain, repeats add nothing (bounded memory). */
const MAX_HITS_PER_RULE = 3;
/** Lifetimes kept per input: a crash loop of thousands of starts keeps its first and latest ones. */
export const MAX_LIFETIMES = 400;
const KEEP_HEAD_LIFETIMES = 50;

/** Marker kinds that keep their first sighting; all others keep the latest. */
const FIRST_WINS = new Set<Marker['kind']>([
  'starting',
  'started',
  'stop_requested',
  'sigterm',
  'weights_loaded',
  'kv_allocated',
  'stop_timeout',
  'sigkill',
  'exit',
  'result',
  'engine_start',
]);

// A fresh lifetime starting at a line.
function newLife(id: number, source: string, line: number, ts: string | null): LifeState {
  return {
    id,
    source,
    pid: null,
    firstLine: line,
    lastLine: line,
    startTs: ts,
    endTs: ts,
    dialect: null,
    sawStart: false,
    appLines: 0,
    ready: null,
    requests: 0,
    firstRequest: null,
    lastRequest: null,
    marks: {},
    drainCount: 0,
    hits: [],
    chains: [],
  };
}

/** Tracks the lifetimes of one input source. */
export class LifetimeTracker {
  readonly lives: LifeState[] = [];
  private current: LifeState | null = null;

  constructor(
    private readonly source: string,
    private readonly nextId: () => number,
  ) {}

  // The lifetime a systemd line refers to (opening one when the window starts mid-life).
  forSystemd(line: number, ts: string | null, marker: Marker | null): LifeState {
    const cur = this.current;
    const starting = marker && (marker.kind === 'starting' || marker.kind === 'started');
    if (starting && cur && (cur.appLines > 0 || cur.marks.exit || cur.marks.result)) return this.open(line, ts, true);
    if (!cur) return this.open(line, ts, Boolean(starting));
    if (starting) cur.sawStart = true;
    return this.touch(cur, line, ts);
  }

  // The lifetime an engine line belongs to: a new PID, or output after an exit, starts a new one.
  forApp(line: number, ts: string | null, pid: number | null, marker: Marker | null): LifeState {
    let cur = this.current;
    const pidChanged = cur && pid !== null && cur.pid !== null && pid !== cur.pid;
    const afterExit = cur && (cur.marks.exit || cur.marks.result) && cur.appLines > 0;
    const restarted = cur && pid === null && marker?.kind === 'engine_start' && cur.appLines > 0;
    if (!cur || pidChanged || afterExit || restarted) cur = this.open(line, ts, false);
    if (cur.pid === null && pid !== null) cur.pid = pid;
    cur.appLines++;
    return this.touch(cur, line, ts);
  }

  // Record a marker on a lifetime (requests are counted, other kinds keep first or latest sighting).
  mark(life: LifeState, marker: Marker, s: Sighting): void {
    if (marker.kind === 'request') return this.countRequest(life, marker, s);
    if (marker.kind === 'ready' && !life.ready) life.ready = s;
    if (marker.kind === 'drain') life.drainCount++;
    if (FIRST_WINS.has(marker.kind) && life.marks[marker.kind]) return;
    life.marks[marker.kind] = s;
  }

  // Attach a rule hit, keeping only the first few per rule.
  addHit(life: LifeState, hit: RuleHit): void {
    let same = 0;
    for (const h of life.hits) if (h.ruleId === hit.ruleId) same++;
    if (same < MAX_HITS_PER_RULE) life.hits.push(hit);
  }

  // Vote for the dialect of a lifetime from its prefixes.
  noteDialect(life: LifeState, d: Dialect | null): void {
    if (d && !life.dialect) life.dialect = d;
  }

  // Find a kept lifetime by id (usually the latest, so search from the end).
  find(id: number): LifeState | null {
    for (let i = this.lives.length - 1; i >= 0; i--) if (this.lives[i].id === id) return this.lives[i];
    return null;
  }

  private countRequest(life: LifeState, marker: Marker, s: Sighting): void {
    if (!isGenerationPath(marker.fields.path)) return;
    if (
      !life.ready &&
      life.dialect &&
      getEngine(life.dialect).logDialect.ownWarmupRequest &&
      (life.sawStart || life.marks.engine_start)
    )
      return; // the engine's own warm-up request
    life.requests++;
    if (!life.firstRequest) life.firstRequest = s;
    life.lastRequest = s;
  }

  private touch(life: LifeState, line: number, ts: string | null): LifeState {
    life.lastLine = line;
    if (ts) {
      life.endTs = ts;
      if (!life.startTs) life.startTs = detach(ts);
    }
    return life;
  }

  // Stop sharing memory with the input once a lifetime stops changing (see detach.ts).
  seal(): void {
    const cur = this.current;
    if (cur?.endTs) cur.endTs = detach(cur.endTs);
  }

  private open(line: number, ts: string | null, sawStart: boolean): LifeState {
    this.seal();
    const life = newLife(this.nextId(), this.source, line, ts && detach(ts));
    life.sawStart = sawStart;
    this.lives.push(life);
    if (this.lives.length > MAX_LIFETIMES) this.lives.splice(KEEP_HEAD_LIFETIMES, 1);
    this.current = life;
    return life;
  }
}
