// OOM-killer evidence for one process lifetime: systemd's notice, a kernel record tied to it by PID, cgroup or time,
// or Result=oom-kill (death.ts weighs it against the rest).
import type { LifeState, RuleHit, Sighting } from './lifetimes.js';
import type { ServiceState } from './state.js';
import { parseStamp } from './time.js';

/** A quoted line with the file it came from. */
export interface Quote extends Sighting {
  source: string;
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

// A sighting quoted with its source.
export function q(life: LifeState, s: Sighting | null | undefined): Quote[] {
  return s ? [{ ...s, source: life.source }] : [];
}

// Epoch ms of a sighting in its source, or null.
export function msOf(ctx: DeathContext, source: string, ts: string | null): number | null {
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
export function oomEvidence(life: LifeState, ctx: DeathContext): { quotes: Quote[]; firm: boolean } {
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
