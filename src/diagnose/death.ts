// Decide what one process lifetime ended with, weighing the evidence in a fixed order of trust:
// systemd's stop timeout, an OOM-killer record, the engine's own fatal error, a clean stop, an outside kill.
import type { LifeState, RuleHit } from './lifetimes.js';
import { APP_FAILURE_CLASSES, CLASS_RANK, scoreOf } from './matcher.js';
import { ALL_RULES } from './rules/index.js';
import { type DeathContext, oomEvidence, type Quote, q } from './oom-evidence.js';
import { judgeRunning } from './running.js';
import type { Confidence, DiagnosisClass, DiagnosisRule } from './types.js';

export type { DeathContext, Quote } from './oom-evidence.js';

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

const RULES_BY_ID = new Map<string, DiagnosisRule>(ALL_RULES.map((r) => [r.id, r]));

// The rule behind a hit.
export function ruleOf(hit: RuleHit): DiagnosisRule {
  return RULES_BY_ID.get(hit.ruleId)!;
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
