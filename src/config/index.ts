// Public surface of the config domain.
export { configSchema, DEFAULT_BENCH_TIMEOUTS, METRICS, type MetricName, type RawConfig } from './schema.js';
export type { Constraint, Dimension, Objective, Problems, SpectuneConfig, TargetHost, Timeouts } from './types.js';
export { validateConfig, type ValidationResult } from './validate.js';
export { normalizeConfig, expandRange, isLatencyMetric, MAX_DIMENSION_VALUES } from './normalize.js';
export { RULES, type Rule, type RuleContext } from './rules.js';
export { parseBytes, parseDurationMs, parseRatio, isPercent } from './units.js';
export { buildJsonSchema, SCHEMA_ID } from './json-schema.js';
export { loadConfig } from './load.js';
export { orderRanks } from './ranks.js';
export { resolveApiKeyInfo, DEFAULT_API_KEY_ENV, type ApiKeyInfo, type ApiKeySetting } from './api-key.js';
export type { SlurmTargetConfig } from './schema-slurm.js';
