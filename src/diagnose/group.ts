// The diagnosis of a group of ranks (one model over several hosts), pure: every evidence line named with its host
// and rank, and a worker's distributed abort linked to the rank that died before it and to that rank's cause.
import { parseStamp } from './time.js';
import type { Diagnosis, DiagnosisClass, EvidenceLine, Lifetime, RankLink, RankSummary } from './types.js';

/** One rank's own diagnosis (its journal and its unit state alone), named. */
export interface RankDiagnosis {
  rank: number;
  host: string;
  unit: string;
  /** The source name its journal was read under (in the group diagnosis too). */
  source: string;
  diagnosis: Diagnosis;
}

/** Classes of a rank that usually echo another rank's end (its peer vanished: NCCL watchdog, torch.distributed). */
const ECHO_CLASSES = new Set<DiagnosisClass>(['distributed_error']);
/** Clock skew tolerated between hosts when ordering deaths (doctor fails a skew beyond 5 s). */
const SKEW_MS = 5000;
/** How long before a worker's abort the peer's end may lie (PyTorch's NCCL collective timeout is 10 min). */
const LINK_WINDOW_MS = 15 * 60_000;

/** A rank's end: what it died of (or a stop), and when. */
interface End {
  rank: RankDiagnosis;
  cls: DiagnosisClass;
  ms: number;
}

// The source name of a rank's journal: "rank1 th2" (evidence lines read "rank1 th2:L12").
export function rankSource(rank: number, host: string): string {
  return `rank${rank} ${host}`;
}

// Every end of a rank's processes with a time: crashes with their cause, stops as clean_stop.
function endsOf(r: RankDiagnosis): End[] {
  const out: End[] = [];
  for (const l of r.diagnosis.lifetimes) {
    const ms = l.end ? (parseStamp(l.end, null)?.ms ?? null) : null;
    if (ms === null || !(l.cause || l.exit)) continue;
    out.push({ rank: r, cls: l.cause ?? 'clean_stop', ms });
  }
  return out;
}

// "was stopped (stop timeout)", "died of kv_cache_oom": what happened to the rank that went first.
function whatHappened(cls: DiagnosisClass): string {
  if (cls === 'stop_timeout') return 'was stopped (stop timeout: SIGKILL after TimeoutStopSec)';
  if (cls === 'clean_stop') return 'was stopped';
  if (cls === 'external_kill') return 'was killed (external_kill)';
  if (cls === 'host_oom_kill') return 'was OOM-killed (host_oom_kill)';
  return `died of ${cls}`;
}

// A worker whose last end is a distributed abort: the first abort of its final run of aborts, linked to the latest
// end of another rank before it (a non-echo end first). An older abort followed by a death of the rank's own (say
// kv_cache_oom) is history, not the reason the rank is down now.
function linkOne(r: RankDiagnosis, all: RankDiagnosis[]): RankLink | null {
  const ends = endsOf(r).sort((a, b) => a.ms - b.ms);
  let i = ends.length;
  while (i > 0 && ECHO_CLASSES.has(ends[i - 1].cls)) i -= 1;
  const abort = ends[i];
  if (!abort) return null;
  const before = all
    .filter((o) => o !== r)
    .flatMap(endsOf)
    .filter((e) => e.ms <= abort.ms + SKEW_MS && e.ms >= abort.ms - LINK_WINDOW_MS);
  const pool = before.some((e) => !ECHO_CLASSES.has(e.cls)) ? before.filter((e) => !ECHO_CLASSES.has(e.cls)) : before;
  const first = pool.sort((a, b) => b.ms - a.ms)[0];
  if (!first) return null;
  const gap = Math.max(0, Math.round((abort.ms - first.ms) / 1000));
  const text = `rank ${r.rank} (${r.host}) aborted (${abort.cls}) because rank ${first.rank.rank} (${first.rank.host}) ${whatHappened(first.cls)} ${gap} s before`;
  return {
    rank: r.rank,
    host: r.host,
    class: abort.cls,
    becauseRank: first.rank.rank,
    becauseHost: first.rank.host,
    becauseClass: first.cls,
    afterSec: gap,
    text,
  };
}

// Link every worker's distributed abort to the rank that ended before it.
export function linkRanks(ranks: RankDiagnosis[]): RankLink[] {
  return ranks.map((r) => linkOne(r, ranks)).filter((l): l is RankLink => l !== null);
}

// Name host and rank on an evidence line: by its source, else (one rank's own diagnosis) as that rank.
function tagLine(e: EvidenceLine, bySource: Map<string, RankDiagnosis>, own: RankDiagnosis | null): EvidenceLine {
  const r = (e.source && bySource.get(e.source)) || own;
  return r
    ? {
        ...e,
        source:
          e.source && e.source !== 'state' ? e.source : `${r.source}${e.source === 'state' ? ' (systemctl show)' : ''}`,
        host: r.host,
        rank: r.rank,
      }
    : e;
}

// Lifetimes carry their rank's source name too.
function tagLives(lives: Lifetime[], own: RankDiagnosis | null): Lifetime[] {
  return own ? lives.map((l) => ({ ...l, source: l.source ?? own.source })) : lives;
}

// Whether a rank's own verdict is only its linked abort read as a crash loop (one failed start in the window).
function loneEcho(v: Diagnosis['verdict'], linked: boolean): boolean {
  return (
    linked &&
    v.class === 'crash_loop' &&
    ECHO_CLASSES.has(v.cause ?? 'unknown') &&
    Number(v.facts?.failed_starts ?? 1) <= 1
  );
}

// One line per rank: its own verdict (a lone linked abort as the abort it is).
function summaries(ranks: RankDiagnosis[], links: RankLink[]): RankSummary[] {
  return ranks.map((r) => {
    const v = r.diagnosis.verdict;
    const echo = loneEcho(
      v,
      links.some((l) => l.rank === r.rank),
    );
    return {
      rank: r.rank,
      host: r.host,
      unit: r.unit,
      class: echo ? v.cause! : v.class,
      cause: echo ? null : v.cause,
      summary: v.summary,
    };
  });
}

// The group's diagnosis: the verdict over every rank's journal (or, with `pick`, that rank's own verdict), every
// evidence line named with host and rank, each rank's own verdict, and the links from workers' aborts to their cause.
// A picked rank whose one distributed abort is linked to another rank's end is that echo, not a crash loop of its own
// (systemd's NRestarts counts restarts outside the window too).
export function joinRanks(group: Diagnosis | null, ranks: RankDiagnosis[], pick?: number): Diagnosis {
  const links = linkRanks(ranks);
  const bySource = new Map(ranks.map((r) => [r.source, r]));
  const own = pick === undefined ? null : (ranks.find((r) => r.rank === pick) ?? null);
  // A group verdict that is a worker's abort linked to one rank's end is about that end: that rank's own verdict answers,
  // with the workers' decisive lines added (a single abort mixed with another host's NRestarts is no crash loop).
  const echo = !group || ECHO_CLASSES.has(group.verdict.class) || ECHO_CLASSES.has(group.verdict.cause ?? 'unknown');
  const root = !own && links.length && echo ? (ranks.find((r) => r.rank === links[0].becauseRank) ?? null) : null;
  const base = own ? own.diagnosis : root ? root.diagnosis : (group ?? ranks[0].diagnosis);
  const soleRank = own ?? root ?? (ranks.length === 1 ? ranks[0] : null);
  const echoes = root ? links.flatMap((l) => echoLines(ranks.find((r) => r.rank === l.rank)!)) : [];
  let verdict = {
    ...base.verdict,
    evidence: [...base.verdict.evidence.map((e) => tagLine(e, bySource, soleRank)), ...echoes],
  };
  const mine = own ? links.filter((l) => l.rank === own.rank) : links;
  if (own && loneEcho(verdict, mine.length > 0)) {
    verdict = {
      ...verdict,
      class: verdict.cause!,
      cause: null,
      summary: `one ${verdict.cause} in the window, not a crash loop: ${mine[0].text}.`,
    };
  }
  if (mine.length)
    verdict = { ...verdict, summary: `${verdict.summary} Linked: ${mine.map((l) => l.text).join('; ')}.`, links: mine };
  const hosts = ranks.map((r) => `rank ${r.rank} ${r.host}`).join(', ');
  const heading = own
    ? `rank ${own.rank} (${own.host}), read with ${hosts}`
    : root
      ? `group of ${ranks.length} ranks (${hosts}), rank ${root.rank} (${root.host}) ended first`
      : `group of ${ranks.length} ranks (${hosts})`;
  return {
    ...base,
    verdict: { ...verdict, summary: `${heading}: ${verdict.summary}` },
    lifetimes: tagLives(base.lifetimes, soleRank),
    ranks: summaries(ranks, links),
  };
}

/** A linked worker's evidence lines quoted in the group verdict (its decisive line and how it ended). */
const ECHO_LINES = 2;

// A linked worker's first evidence lines, named with its host and rank.
function echoLines(r: RankDiagnosis): EvidenceLine[] {
  return r.diagnosis.verdict.evidence.slice(0, ECHO_LINES).map((e) => tagLine(e, new Map(), r));
}
