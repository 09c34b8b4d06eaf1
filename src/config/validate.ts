// The pure config pipeline: migrate renamed keys → schema (defaults) → normalise units → rules.
import { configSchema } from './schema.js';
import { formatIssue, knownKeysAt } from './messages.js';
import { migrateKeys } from './migrations.js';
import { normalizeConfig } from './normalize.js';
import { RULES, type RuleContext } from './rules.js';
import type { Problems, SpectuneConfig } from './types.js';

/** The outcome of validation: a usable config, or the reasons it is not. */
export type ValidationResult =
  | { ok: true; config: SpectuneConfig; errors: []; warnings: string[] }
  | { ok: false; config: null; errors: string[]; warnings: string[] };

// Validate parsed YAML/JSON without throwing; every message reads `path: expected ..., got ...`.
export function validateConfig(json: unknown, ctx: RuleContext = {}): ValidationResult {
  const migrated = migrateKeys(json);
  const p: Problems = { errors: [], warnings: [...migrated.messages] };
  const parsed = configSchema.safeParse(migrated.value, { reportInput: true });
  if (!parsed.success) {
    const errors = parsed.error.issues.flatMap((i) =>
      formatIssue(i, (path) => knownKeysAt(configSchema, path)).split('\n'),
    );
    return { ok: false, config: null, errors, warnings: p.warnings };
  }
  const config = normalizeConfig(parsed.data, p);
  if (!p.errors.length) for (const rule of RULES) rule.check(config, ctx, p);
  if (p.errors.length) return { ok: false, config: null, errors: p.errors, warnings: p.warnings };
  return { ok: true, config, errors: [], warnings: p.warnings };
}
