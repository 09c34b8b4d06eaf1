// Decide what one process lifetime ended with, weighing the evidence in a fixed order of trust:
// systemd's stop timeout, an OOM-killer record, the engine's own fatal error, a clean stop, an outside kill.
import type { LifeState, RuleHit, Sighting } from './lifetimes.js';
import { APP_FAILURE_CLASSES, CLASS_RANK, scoreOf } from './matcher.js';
import { ALL_RULES } from './rules/index.js';
import { judgeRunning } from './running.js';
import type { ServiceState } from './state.js';
import { parseStamp } from './time.js';
import type { Confidence, DiagnosisClass, DiagnosisRule } from './types.js';

/** A quoted line with the file it came from. */
export interface Quote extends Sighting {
  source: string;
}

/** The judgement of one lifetime. */
export interface Death {
  life: LifeState;
  class: DiagnosisClass;
  crashed: boolean;
  /** False while the process is still running at the end of the window. */
  ended: boolean;
  confidence: Confidence;
  evidence: Quote[];
  /** The rule hit that decided an engine failure, if any. */
  decisive: RuleHit | null;
  /** OOM-killer records tied to this lifetime. */
  oom: Quote[];
}

/** Context shared by all lifetimes of one diagnosis. */
export interface DeathContext {
  unowned: RuleHit[];
  state: ServiceState | null;
  /** Id of the lifetime `state` describes (the latest one of the unit). */
  stateLife: number | null;
  unit: string | null;
  yearHints: Map<string, number | null>;
}

/** Slack when tying a kernel OOM record to a lifetime by time: journald and the kernel stamp lines separately. */
const OOM_TIME_SLACK_MS = 10_000;
const RULES_BY_ID = new Map<string, DiagnosisRule>(ALL_RULES.map((r) => [r.id, r]));

// The rule behind a hit.
export function ruleOf(hit: RuleHit): DiagnosisRule {
  return RULES_BY_ID.get(hit.ruleId)!;
}

// A sighting quoted with its source.
function q(life: LifeState, s: Sighting | null | undefined): Quote[] {
  return s ? [{ ...s, source: life.source }] : [];
}

// Epoch ms of a sighting in its source, or null.
function msOf(ctx: DeathContext, source: string, ts: string | null): number | null {
  return parseStamp(ts, ctx.yearHints.get(source) ?? null)?.ms ?? null;
}

/** How firmly a kernel OOM record is tied to a lifetime: by PID or cgroup ("exact"), or only by time ("time"). */
type OomTie = 'exact' | 'time' | null;

// The cgroup of a kernel kill: on its own line, or on the oom-kill context line naming the same victim.
function memcgOf(h: RuleHit, ctx: DeathContext): string | undefined {
  const own = h.fields.task_memcg ?? h.fields.oom_memcg;
  if (own) return own;
  const c = ctx.unowned.find(
    (x) => x.ruleId === 'kernel.oom_kill_context' && x.fields.victim_pid === h.fields.victim_pid,
  );
  return c?.fields.task_memcg ?? c?.fields.oom_memcg;
}

// Is a kernel OOM hit about this lifetime: same PID, same unit cgroup in the time window, or inside its lines?
function oomTie(life: LifeState, h: RuleHit, ctx: DeathContext): OomTie {
  if (h.fields.victim_pid && life.pid !== null && Number(h.fields.victim_pid) === life.pid) return 'exact';
  const memcg = memcgOf(h, ctx);
  if (memcg && ctx.unit && !memcg.includes(ctx.unit)) return null;
  const tie: OomTie = memcg && ctx.unit ? 'exact' : 'time';
  const t = msOf(ctx, h.source, h.ts);
  const a = msOf(ctx, life.source, life.startTs);
  const b = msOf(ctx, life.source, life.endTs);
  if (t !== null && a !== null && b !== null)
    return t >= a - OOM_TIME_SLACK_MS && t <= b + OOM_TIME_SLACK_MS ? tie : null;
  return h.source === life.source && h.line >= life.firstLine && h.line <= life.lastLine + 50 ? tie : null;
}

// OOM-killer evidence for a lifetime: systemd's notice, a correlated kernel line, or Result=oom-kill.
function oomEvidence(life: LifeState, ctx: DeathContext): { quotes: Quote[]; firm: boolean } {
  // A non-fatal host-memory hint (a projection over the host's RAM) counts only when the process was then killed.
  const killed =
    life.hits.some((h) => h.ruleId === 'process.killed_by_signal') || life.marks.exit?.fields.status === '9';
  const own = life.hits.filter(
    (h) => h.class === 'host_oom_kill' && (h.fatal || killed || h.ruleId === 'kernel.oom_kill_context'),
  );
  const ties = ctx.unowned
    .filter((h) => h.class === 'host_oom_kill' && h.fatal)
    .map((h) => ({ h, tie: oomTie(life, h, ctx) }))
    .filter((x) => x.tie);
  const out: Quote[] = [...ties.map((x) => x.h), ...own].map((h) => ({
    line: h.line,
    ts: h.ts,
    text: h.text,
    fields: h.fields,
    source: h.source,
  }));
  const stateSays = life.id === ctx.stateLife && ctx.state?.Result === 'oom-kill';
  if (stateSays) out.push({ line: 0, ts: null, text: 'systemctl show: Result=oom-kill', fields: {}, source: 'state' });
  return { quotes: out, firm: own.some((h) => h.fatal) || stateSays || ties.some((x) => x.tie === 'exact') };
}

// The decisive engine failure among the hits, after refinements (e.g. an OOM raised inside capture_model).
export function bestFailure(
  hits: RuleHit[],
  raised = true,
): { hit: RuleHit; cls: DiagnosisClass; refiner?: RuleHit } | null {
  const failures = hits.filter((h) => h.fatal && APP_FAILURE_CLASSES.has(h.class));
  const refiners = hits.filter((h) => ruleOf(h).refines).sort((a, b) => CLASS_RANK[b.class] - CLASS_RANK[a.class]);
  if (!failures.length) {
    // A context rule names an unexplained failure only when something failed: a traceback or an abort was printed.
    const r = raised ? refiners.find((h) => ruleOf(h).refines!.includes('unknown')) : undefined;
    return r ? { hit: r, cls: r.class } : null;
  }
  const best = failures.reduce((a, b) => (scoreOf(ruleOf(b)) > scoreOf(ruleOf(a)) ? b : a));
  const refiner = refiners.find((h) => ruleOf(h).refines!.includes(best.class));
  return refiner ? { hit: best, cls: refiner.class, refiner } : { hit: best, cls: best.class };
}

/** Confidence levels in order, to take the lower of two. */
const CONFIDENCE_ORDER: Record<Confidence, number> = { low: 0, medium: 1, high: 2 };

/** Classes that are usually the echo of another failure (a dead rank makes the others fail in NCCL). */
const ECHO_CLASSES = new Set<DiagnosisClass>(['distributed_error']);
/** Classes that name one memory failure at different levels (the KV buffer's cudaMalloc, an OOM inside capture). */
const MEMORY_LEVELS = new Set<DiagnosisClass>(['kv_cache_oom', 'cuda_oom', 'cuda_graph_capture_failure']);

// Do two classes tell the same failure at different levels (so neither contradicts the other)?
function nested(a: DiagnosisClass, b: DiagnosisClass): boolean {
  if (MEMORY_LEVELS.has(a) && MEMORY_LEVELS.has(b)) return true;
  // A CUDA error raised inside graph capture is the capture failure itself.
  return (
    (a === 'cuda_graph_capture_failure' && b === 'cuda_error') ||
    (b === 'cuda_graph_capture_failure' && a === 'cuda_error')
  );
}

// Confidence discipline: `high` only when no other firm failure of another class competes in the same lifetime.
function disciplined(c: Confidence, chosen: { hit: RuleHit; cls: DiagnosisClass }, hits: RuleHit[]): Confidence {
  if (c !== 'high') return c;
  const refines = ruleOf(chosen.hit).refines ?? [];
  const rival = hits.some(
    (h) =>
      h.fatal &&
      h.class !== chosen.cls &&
      h.class !== chosen.hit.class &&
      APP_FAILURE_CLASSES.has(h.class) &&
      !ECHO_CLASSES.has(h.class) &&
      !refines.includes(h.class) &&
      !nested(h.class, chosen.cls) &&
      ruleOf(h).confidence === 'high' &&
      !(ruleOf(h).refines ?? []).includes(chosen.cls),
  );
  return rival ? 'medium' : c;
}

// Exit facts: how the main process ended, from the journal or (for the latest lifetime) from systemctl show.
function exitOf(life: LifeState, ctx: DeathContext): { code: string; status: number } | null {
  const e = life.marks.exit?.fields;
  if (e) return { code: e.code, status: Number(e.status) };
  const st = ctx.state;
  if (life.id !== ctx.stateLife || !st || !st.ExecMainCode) return null;
  return { code: ['', 'exited', 'killed', 'dumped'][st.ExecMainCode] ?? 'exited', status: st.ExecMainStatus ?? 0 };
}

// Did the process stop because it was asked to, and finish cleanly?
function isCleanStop(life: LifeState, exit: { code: string; status: number } | null): boolean {
  const m = life.marks;
  const asked = Boolean(m.stop_requested || m.sigterm || m.app_exit);
  const drained = life.hits.some((h) => h.ruleId === 'sglang.drain_complete');
  const cleanExit = exit
    ? (exit.code === 'exited' && exit.status === 0) || (exit.code === 'killed' && [2, 15].includes(exit.status))
    : false;
  const cleanResult = m.result?.fields.result === 'success';
  return asked && (drained || cleanExit || cleanResult || (Boolean(m.app_exit) && !exit));
}

// Judge one lifetime.
export function judgeLifetime(life: LifeState, ctx: DeathContext): Death {
  const m = life.marks;
  const exit = exitOf(life, ctx);
  const ended = Boolean(exit || m.result || m.stop_timeout || m.app_exit || m.app_abort);
  const tail = [...q(life, m.sigkill), ...q(life, m.exit), ...q(life, m.result)];
  const base = { life, ended, decisive: null, oom: [] as Quote[] };
  const stateTimeout = life.id === ctx.stateLife && ctx.state?.Result === 'timeout';
  if (m.stop_timeout || (stateTimeout && (m.stop_requested || m.sigterm))) {
    const ev = [
      ...q(life, m.stop_requested),
      ...q(life, m.sigterm),
      ...q(life, m.drain),
      ...q(life, m.stop_timeout),
      ...tail,
    ];
    return {
      ...base,
      ended: true,
      class: 'stop_timeout',
      crashed: true,
      confidence: m.stop_timeout ? 'high' : 'medium',
      evidence: ev,
    };
  }
  const { quotes: oom, firm } = oomEvidence(life, ctx);
  if (oom.length)
    return {
      ...base,
      ended: true,
      oom,
      class: 'host_oom_kill',
      crashed: true,
      confidence: firm ? 'high' : 'medium',
      evidence: [...oom, ...tail],
    };
  const failure = bestFailure(life.hits, life.chains.length > 0 || Boolean(m.app_abort));
  if (failure) {
    const hq = {
      line: failure.hit.line,
      ts: failure.hit.ts,
      text: failure.hit.text,
      fields: failure.hit.fields,
      source: failure.hit.source,
    };
    // A class sharpened by a context rule is no surer than that rule.
    const own = ruleOf(failure.hit).confidence;
    const sharpened =
      failure.refiner && CONFIDENCE_ORDER[ruleOf(failure.refiner).confidence] < CONFIDENCE_ORDER[own]
        ? ruleOf(failure.refiner).confidence
        : own;
    const confidence = disciplined(sharpened, failure, life.hits);
    return {
      ...base,
      decisive: failure.hit,
      class: failure.cls,
      crashed: true,
      confidence,
      evidence: [hq, ...tail, ...q(life, m.restart)],
    };
  }
  if (isCleanStop(life, exit)) {
    const ev = [
      ...q(life, m.stop_requested),
      ...q(life, m.sigterm),
      ...q(life, m.drain),
      ...q(life, m.app_exit),
      ...tail,
    ];
    // The engine's own "exiting" lines do not prove the exit was clean: only systemd's exit/result record does.
    const confirmed = Boolean(exit || m.result);
    return {
      ...base,
      ended: true,
      class: 'clean_stop',
      crashed: false,
      confidence: confirmed ? 'high' : 'medium',
      evidence: ev,
    };
  }
  return judgeUnexplained(life, exit, ended, tail);
}

// No rule explains the end: an outside kill, an unexplained crash, a clean exit, or still running (healthy, starting).
function judgeUnexplained(
  life: LifeState,
  exit: { code: string; status: number } | null,
  ended: boolean,
  tail: Quote[],
): Death {
  const m = life.marks;
  const base = { life, ended, decisive: null, oom: [] as Quote[] };
  const killRequest =
    life.hits.find((h) => h.ruleId === 'systemd.client_kill') ??
    life.hits.find((h) => h.fatal && h.class === 'external_kill' && ruleOf(h).confidence !== 'low');
  if (killRequest) {
    const kq = {
      line: killRequest.line,
      ts: killRequest.ts,
      text: killRequest.text,
      fields: killRequest.fields,
      source: killRequest.source,
    };
    return {
      ...base,
      ended: true,
      class: 'external_kill',
      crashed: true,
      confidence: ruleOf(killRequest).confidence,
      evidence: [kq, ...tail],
      decisive: killRequest,
    };
  }
  const raised = life.chains.find((c) => c.blocks[0]?.type);
  if (raised && (exit?.status !== 0 || !ended)) {
    const root = raised.blocks[0];
    const rq: Quote = {
      line: root.terminalLine ?? raised.firstLine,
      ts: null,
      text: `${root.type}: ${root.message}`.split('\n')[0],
      fields: {},
      source: life.source,
    };
    // Raised while a library module was being imported (a `<module>` frame below the entry point): the installed
    // packages do not fit together, whatever the exception says.
    if (
      root.frames
        .slice(1)
        .some(
          (f) =>
            f.func === '<module>' &&
            /(?:site|dist)-packages\/|^[\w-]+\//.test(f.file) &&
            !/runpy\.py$|__main__\.py$/.test(f.file),
        )
    ) {
      return { ...base, class: 'dependency_error', crashed: ended, confidence: 'medium', evidence: [rq, ...tail] };
    }
    return { ...base, class: 'unknown', crashed: ended, confidence: 'low', evidence: [rq, ...tail] };
  }
  // A low-confidence kill hint (a child or worker died of a signal, a shell says "Killed"): who sent it is unknown.
  const child = life.hits.find((h) => h.class === 'external_kill' && ruleOf(h).confidence === 'low');
  if ((exit && exit.code === 'killed') || child) {
    const ev = [...q(life, m.sigterm), ...(child ? [{ ...child, source: child.source }] : []), ...tail];
    return { ...base, ended: true, class: 'external_kill', crashed: true, confidence: 'low', evidence: ev };
  }
  if ((exit && exit.status !== 0) || m.app_abort)
    return {
      ...base,
      class: 'unknown',
      crashed: true,
      confidence: 'low',
      evidence: [...q(life, m.app_abort), ...tail],
    };
  if (ended) return { ...base, class: 'clean_stop', crashed: false, confidence: 'medium', evidence: tail };
  // Asked to stop, shutting down, no error and no exit yet: a stop under way (the window ends before the exit).
  if ((m.sigterm || m.stop_requested) && !life.chains.length) {
    return {
      ...base,
      class: 'clean_stop',
      crashed: false,
      confidence: 'low',
      evidence: [...q(life, m.stop_requested), ...q(life, m.sigterm)],
    };
  }
  const running = judgeRunning(life);
  return {
    ...base,
    class: running.class,
    crashed: false,
    confidence: running.confidence,
    evidence: running.evidence.flatMap((s) => q(life, s)),
  };
}
