// Match rules against messages fast: one combined prefilter regex, then only the rules that can match.
import type { EngineName } from '../engines/types.js';
import { stripAppPrefix } from './prefix.js';
import { parseLine } from './records.js';
import { ALL_RULES } from './rules/index.js';
import type { DiagnosisClass, DiagnosisRule } from './types.js';

/** A rule that matched one message, with its named-group facts. */
export interface RuleMatch {
  rule: DiagnosisRule;
  facts: Record<string, string>;
}

/** Classes that describe why a process failed by itself (as opposed to lifecycle classes). */
export const APP_FAILURE_CLASSES: ReadonlySet<DiagnosisClass> = new Set<DiagnosisClass>([
  'kv_cache_oom',
  'cuda_oom',
  'cuda_graph_capture_failure',
  'distributed_error',
  'port_in_use',
  'bad_config',
  'model_load_error',
  'speculative_error',
  'cuda_error',
  'disk_full',
  'tokenizer_error',
  'dependency_error',
]);

/**
 * How specific a class is when several match one lifetime: a capture failure wraps a CUDA OOM, a KV-pool check is
 * more precise than an allocator OOM, and NCCL errors are usually the echo of another rank's death.
 */
export const CLASS_RANK: Readonly<Record<DiagnosisClass, number>> = {
  cuda_graph_capture_failure: 90,
  speculative_error: 85,
  kv_cache_oom: 80,
  port_in_use: 75,
  bad_config: 70,
  model_load_error: 65,
  cuda_oom: 60,
  cuda_error: 50,
  distributed_error: 40,
  host_oom_kill: 95,
  stop_timeout: 97,
  crash_loop: 99,
  external_kill: 30,
  clean_stop: 10,
  healthy: 0,
  starting: 0,
  unknown: 0,
  disk_full: 88,
  tokenizer_error: 68,
  dependency_error: 66,
};

/** Weight of a rule's confidence when ranking hits (dominates the class rank). */
export const CONFIDENCE_WEIGHT = { high: 300, medium: 200, low: 100 } as const;

/**
 * Rules look at the first 16 KiB of a message. Error lines carry their cause near the start; past that a line is a
 * blob (a pasted dump, a request body), and some patterns (`RuntimeError: .*speculative.*`) backtrack in time that
 * grows with the square of the length: a 300 KB line of repeated "RuntimeError: CUDA out of memory" took 6 s.
 */
export const MAX_MATCH_CHARS = 16 * 1024;

// The part of a message the rules see.
function matchable(text: string): string {
  return text.length > MAX_MATCH_CHARS ? text.slice(0, MAX_MATCH_CHARS) : text;
}

// Remove named groups so that many patterns can be joined into one regex.
function anonymise(source: string): string {
  return source.replace(/\(\?<([A-Za-z_]\w*)>/g, '(?:');
}

/** A compiled set of rules. */
export class RuleMatcher {
  private readonly prefilter: RegExp;
  /** One regex over every `clearedBy` pattern (null when no rule has one), and the rules each clears. */
  private readonly clearFilter: RegExp | null;
  private readonly clearing: { pattern: RegExp; ruleId: string }[];

  /** Case-insensitive patterns get their own prefilter (a joined regex has one set of flags). */
  private readonly prefilterI: RegExp | null;

  constructor(readonly rules: readonly DiagnosisRule[]) {
    const all = rules.flatMap((r) => r.patterns);
    const join = (ps: RegExp[]) => ps.map((p) => `(?:${anonymise(p.source)})`).join('|');
    this.prefilter = new RegExp(join(all.filter((p) => !p.flags.includes('i'))) || '(?!)');
    const folded = all.filter((p) => p.flags.includes('i'));
    this.prefilterI = folded.length ? new RegExp(join(folded), 'i') : null;
    this.clearing = rules.flatMap((r) => (r.clearedBy ?? []).map((pattern) => ({ pattern, ruleId: r.id })));
    this.clearFilter = this.clearing.length
      ? new RegExp(this.clearing.map((c) => `(?:${anonymise(c.pattern.source)})`).join('|'))
      : null;
  }

  // Ids of the context rules a message ends (e.g. "capture finished" ends "capture in progress"), or null.
  clearedRules(message: string): Set<string> | null {
    const text = matchable(message);
    if (!this.clearFilter?.test(text)) return null;
    return new Set(this.clearing.filter((c) => c.pattern.test(text)).map((c) => c.ruleId));
  }

  // Every rule matching the message (usually none: the prefilter rejects ordinary lines in one pass).
  match(message: string): RuleMatch[] {
    const text = matchable(message);
    if (!this.prefilter.test(text) && !this.prefilterI?.test(text)) return [];
    const out: RuleMatch[] = [];
    for (const rule of this.rules) {
      for (const p of rule.patterns) {
        const m = p.exec(text);
        if (!m) continue;
        const facts: Record<string, string> = {};
        for (const [k, v] of Object.entries(m.groups ?? {})) if (v !== undefined) facts[k] = v;
        out.push({ rule, facts });
        break;
      }
    }
    return out;
  }
}

let defaultMatcher: RuleMatcher | null = null;
const engineMatchers = new Map<EngineName, RuleMatcher>();

// The shared matcher over all rules (built once).
export function matcherForAll(): RuleMatcher {
  defaultMatcher ??= new RuleMatcher(ALL_RULES);
  return defaultMatcher;
}

// The matcher for one engine's rules (built once per engine).
function matcherFor(engine: EngineName): RuleMatcher {
  let m = engineMatchers.get(engine);
  if (!m) {
    m = new RuleMatcher(ALL_RULES.filter((r) => !r.engines || r.engines.includes(engine)));
    engineMatchers.set(engine, m);
  }
  return m;
}

// Score of a match: confidence first, then class specificity.
export function scoreOf(rule: DiagnosisRule): number {
  return CONFIDENCE_WEIGHT[rule.confidence] + CLASS_RANK[rule.class] + (rule.priority ?? 0);
}

// Fast check of one log message for a fatal line (used by the readiness watcher to fail fast).
export function findFatalLine(message: string, engine?: EngineName): { ruleId: string; class: DiagnosisClass } | null {
  const text = stripAppPrefix(parseLine(message).message).text;
  const matches = (engine ? matcherFor(engine) : matcherForAll()).match(text).filter((m) => m.rule.fatal !== false);
  if (!matches.length) return null;
  const best = matches.reduce((a, b) => (scoreOf(b.rule) > scoreOf(a.rule) ? b : a));
  return { ruleId: best.rule.id, class: best.rule.class };
}
