// Third step of the config pipeline: cross-field rules over the normalised config, each pushing errors or warnings.
import type { EngineName, ParamSpec } from '../engines/types.js';
import { isLatencyMetric } from './normalize.js';
import type { Problems, SpectuneConfig } from './types.js';

/** What rules may consult besides the config (engine parameter tables, when the caller has them). */
export interface RuleContext {
  params?: Partial<Record<EngineName, ParamSpec[]>>;
}

/** A rule: a stable id and a check that pushes problems. */
export interface Rule {
  id: string;
  check(cfg: SpectuneConfig, ctx: RuleContext, p: Problems): void;
}

// Below typical run-to-run noise of an LLM benchmark (1-2%), a margin lets noise pick the winner.
export const MIN_SENSIBLE_MARGIN = 0.01;
// Above this, real 20-30% gains of one speculative step would be called ties.
export const MAX_SENSIBLE_MARGIN = 0.2;

/** Edit distance, for "did you mean" on setting keys and config keys. */
export function distance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++)
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
  }
  return d[a.length][b.length];
}

// Space keys must be canonical snake_case names the engine knows, within the engine's ranges.
function checkSpaceKeys(cfg: SpectuneConfig, ctx: RuleContext, p: Problems): void {
  if (!cfg.space.length)
    p.errors.push(
      'space: expected at least one setting to tune, got none (example: space: {speculative_num_steps: {min: 1, max: 10}})',
    );
  const specs = ctx.params?.[cfg.target.engine];
  const keys = cfg.space.map((d) => d.key);
  for (const k of new Set(keys.filter((k, i) => keys.indexOf(k) !== i)))
    p.errors.push(`space.${k}: expected each setting once, got it under two spellings`);
  for (const dim of cfg.space) {
    if (!/^[a-z][a-z0-9_]*$/.test(dim.key)) {
      p.errors.push(
        `space.${dim.key}: expected a canonical snake_case setting key such as speculative_num_steps, got "${dim.key}"`,
      );
      continue;
    }
    if (!specs) continue;
    const spec = specs.find((s) => s.key === dim.key || s.aliases?.includes(dim.key));
    if (!spec) {
      const near = specs.map((s) => s.key).sort((a, b) => distance(dim.key, a) - distance(dim.key, b))[0];
      p.errors.push(
        `space.${dim.key}: expected a ${cfg.target.engine} setting, got an unknown key${near ? ` (did you mean ${near}?)` : ''}`,
      );
      continue;
    }
    const bad = dim.values.filter(
      (v) =>
        typeof v === 'number' && ((spec.min !== undefined && v < spec.min) || (spec.max !== undefined && v > spec.max)),
    );
    if (bad.length)
      p.errors.push(
        `space.${dim.key}: expected values within ${spec.min ?? '-inf'}..${spec.max ?? 'inf'}, got ${bad.join(', ')}`,
      );
  }
}

// Read levels must be benchmarked.
function checkLevels(cfg: SpectuneConfig, _ctx: RuleContext, p: Problems): void {
  const levels = cfg.benchmark.concurrency;
  if (!levels.includes(cfg.objective.concurrency)) {
    p.errors.push(
      `objective.concurrency: expected one of the benchmark levels [${levels.join(', ')}], got ${cfg.objective.concurrency} (add it to benchmark.concurrency)`,
    );
  }
  cfg.constraints.forEach((c, i) => {
    if (!levels.includes(c.concurrency))
      p.errors.push(
        `constraints.${i}.concurrency: expected one of the benchmark levels [${levels.join(', ')}], got ${c.concurrency}`,
      );
  });
}

// Hosts: one or two, distinct ranks, the process manager only locally.
function checkHosts(cfg: SpectuneConfig, _ctx: RuleContext, p: Problems): void {
  const roles = cfg.target.hosts.map((h) => h.role);
  if (new Set(roles).size !== roles.length)
    p.errors.push(`target.hosts: expected distinct roles (rank0, rank1), got ${roles.join(', ')}`);
  if (cfg.target.manager === 'process' && cfg.target.hosts.some((h) => h.host !== null)) {
    p.errors.push(
      'target.manager: expected systemd for remote hosts, got process (the process manager runs services on this machine only)',
    );
  }
  if (cfg.target.manager === 'slurm' && !cfg.target.slurm)
    p.errors.push(
      'target.slurm: expected the trial job section under manager: slurm (mem, command; see README "Slurm")',
    );
  if (cfg.target.manager !== 'slurm' && cfg.target.slurm)
    p.errors.push(`target.slurm: only used with manager: slurm, got manager: ${cfg.target.manager}`);
  if (cfg.target.manager === 'slurm' && cfg.target.hosts.length > 1)
    p.errors.push(
      'target.hosts: expected one entry (login host, job name) under manager: slurm; a two-node trial is target.slurm.nodes: 2',
    );
  if (cfg.target.slurm && !cfg.target.slurm.login && !cfg.target.hosts[0]?.host)
    p.errors.push('target.slurm.login: expected the login host (or target.hosts[0].host), got neither');
  if (cfg.target.slurm?.nodes === 2 && !cfg.target.slurm.rank1Command)
    p.errors.push('target.slurm.rank1Command: expected the rank-1 command line for nodes: 2');
  if (cfg.target.manager === 'process' && cfg.target.hosts.length > 1) {
    p.errors.push(
      `target.hosts: expected one host under manager: process, got ${cfg.target.hosts.length} (a model split across hosts needs systemd on each)`,
    );
  }
}

// Secrets: one source only, and literal keys are discouraged.
function checkApiKey(cfg: SpectuneConfig, _ctx: RuleContext, p: Problems): void {
  if (cfg.target.apiKey && cfg.target.apiKeyEnv)
    p.errors.push('target.apiKey: expected either apiKey or apiKeyEnv, got both');
  else if (cfg.target.apiKey)
    p.warnings.push(
      'target.apiKey: a literal key in the config file; prefer apiKeyEnv (spectune never stores it unredacted)',
    );
}

// Search settings that work but are probably not what the operator meant.
function checkSearch(cfg: SpectuneConfig, _ctx: RuleContext, p: Problems): void {
  const m = cfg.search.noiseMargin;
  if (m <= 0 || m >= 0.5) p.errors.push(`search.noiseMargin: expected a ratio between 0 and 50%, got ${m}`);
  else if (m < MIN_SENSIBLE_MARGIN)
    p.warnings.push(`search.noiseMargin: ${m} is below typical benchmark noise (1-2%); noise may pick the winner`);
  else if (m > MAX_SENSIBLE_MARGIN)
    p.warnings.push(`search.noiseMargin: ${m} is large; real gains of one setting step may be called ties`);
  if (cfg.search.soak.repeats === 0)
    p.warnings.push('search.soak.repeats: 0 accepts the winner without a stability soak');
  const grid = cfg.space.reduce((n, d) => n * d.values.length, 1);
  if (cfg.search.strategy === 'grid' && grid > cfg.budget.trials) {
    p.warnings.push(
      `budget.trials: the grid has ${grid} points but the budget allows ${cfg.budget.trials}; the grid will stop early (adaptive needs fewer restarts)`,
    );
  }
}

// Objective and constraints: direction matches the metric, relative thresholds are plausible.
function checkObjective(cfg: SpectuneConfig, _ctx: RuleContext, p: Problems): void {
  const o = cfg.objective;
  if (isLatencyMetric(o.metric) !== (o.goal === 'minimize'))
    p.warnings.push(
      `objective.goal: ${o.goal} ${o.metric} is unusual (did you mean ${o.goal === 'maximize' ? 'minimize' : 'maximize'}?)`,
    );
  cfg.constraints.forEach((c, i) => {
    if (c.relative && (c.value <= 0 || c.value > 10))
      p.errors.push(
        `constraints.${i}.value: expected a percentage of the baseline such as "90%", got ${c.value * 100}%`,
      );
  });
}

/** Every rule, in the order their messages are printed. */
export const RULES: Rule[] = [
  { id: 'space-keys', check: checkSpaceKeys },
  { id: 'bench-levels', check: checkLevels },
  { id: 'hosts', check: checkHosts },
  { id: 'api-key', check: checkApiKey },
  { id: 'search', check: checkSearch },
  { id: 'objective', check: checkObjective },
];
