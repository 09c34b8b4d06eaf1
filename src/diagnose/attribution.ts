// Attribute a stop (SIGTERM, stop job, kill) to whoever asked for it, from the action log.
import type { LifeState } from './lifetimes.js';
import { parseStamp } from './time.js';
import type { ActionRecord } from './types.js';

/** How long before the first stop line an action may have been issued (systemctl can queue behind other jobs). */
const ACTION_LEAD_MS = 15 * 60_000;
/** Clock skew tolerated after the stop line (the action log and the journal are stamped by different clocks). */
const ACTION_LAG_MS = 2 * 60_000;
const STOP_ACTIONS = new Set(['stop', 'restart', 'kill', 'deploy', 'rollback']);

// The first line showing the stop: systemd's stop job, the engine's SIGTERM, a kill request, or the timeout.
function stopSighting(life: LifeState) {
  const m = life.marks;
  return m.stop_requested ?? m.sigterm ?? m.kill_request ?? m.stop_timeout ?? null;
}

// The action (stop/restart/kill...) that explains a lifetime's stop, or null.
export function attributeStop(
  life: LifeState,
  actions: ActionRecord[],
  hints: Map<string, number | null>,
): ActionRecord | null {
  const s = stopSighting(life);
  if (!s || !actions.length) return null;
  const candidates = actions.filter((a) => STOP_ACTIONS.has(a.action));
  const at = parseStamp(s.ts, hints.get(life.source) ?? null)?.ms ?? null;
  if (at === null) return candidates.length === 1 ? candidates[0] : null;
  let best: ActionRecord | null = null;
  let bestGap = Infinity;
  for (const a of candidates) {
    const t = Date.parse(a.ts);
    if (!Number.isFinite(t) || t < at - ACTION_LEAD_MS || t > at + ACTION_LAG_MS) continue;
    const gap = Math.abs(at - t);
    if (gap < bestGap) {
      best = a;
      bestGap = gap;
    }
  }
  return best;
}

// " requested by operator (action log, 2026-03-09T22:27:18Z)" or a neutral phrase when unattributed.
export function stopPhrase(life: LifeState, actions: ActionRecord[], hints: Map<string, number | null>): string {
  const a = attributeStop(life, actions, hints);
  if (a) return `the ${a.action} requested by ${a.by} (action log, ${a.ts}${a.why ? `, "${a.why}"` : ''})`;
  if (life.marks.stop_requested) return 'a systemd stop job (`systemctl stop`/restart; no action log names who)';
  if (life.marks.sigterm) return 'a SIGTERM (sender unknown: no systemd stop job or action log in the input)';
  return 'a stop';
}
