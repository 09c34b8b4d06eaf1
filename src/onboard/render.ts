// Text forms of init's findings and doctor's checks (pure).
import { summarizeChecks } from './checks.js';
import type { CheckResult, EngineUnit } from './types.js';

// One line per engine unit found: name, engine, model, port, speculative settings.
export function formatUnits(units: readonly EngineUnit[]): string {
  return units
    .map((u) => {
      const spec =
        Object.entries(u.speculative)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ') || 'speculation off';
      const where = u.source === 'docker' ? ` [docker${u.compose ? ` ${u.compose}` : ''}: not tunable]` : '';
      return `  ${u.unit}  ${u.engine}  model ${u.model ?? '?'}  port ${u.port}  ${spec}${where}`;
    })
    .join('\n');
}

// The doctor report: one line per check (status, id, subject, summary), the fix under each non-PASS, a total.
export function formatChecks(checks: readonly CheckResult[]): string {
  const lines: string[] = [];
  for (const c of checks) {
    lines.push(`${c.status.padEnd(4)}  ${c.id.padEnd(12)}  ${c.subject}: ${c.summary}`);
    if (c.fix && c.status !== 'PASS') lines.push(`${' '.repeat(20)}fix: ${c.fix}`);
  }
  const s = summarizeChecks(checks);
  lines.push(
    '',
    `doctor: ${s.pass} passed, ${s.warn} warning${s.warn === 1 ? '' : 's'}, ${s.fail} failed${s.skip ? `, ${s.skip} skipped` : ''}${s.fail ? ' — fix the FAILs before `spectune tune`' : ''}`,
  );
  return `${lines.join('\n')}\n`;
}
