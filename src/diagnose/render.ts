// The human report of a Diagnosis (plain text, secrets redacted); --json prints the object itself.
import { redactText } from '../redact.js';
import type { Diagnosis, DiagnosisClass, Remediation, TimelineEntry } from './types.js';

/** Timeline rows shown in the human report: the start and the end matter most, the middle is elided. */
const TIMELINE_HEAD_ROWS = 12;
const TIMELINE_TAIL_ROWS = 28;
/** Frames shown of the root exception (outermost and innermost ones). */
const FRAME_ROWS = 16;
/** Characters of one quoted line in the human report. */
const LINE_WIDTH = 240;
/** The no-failure verdicts say so on the first line, before any detail. */
const NO_CRASH: Partial<Record<DiagnosisClass, string>> = {
  healthy: 'no crash found, ',
  starting: 'not ready yet, no crash found, ',
};

// Shorten a line for a terminal.
function clip(text: string): string {
  const one = text.replace(/\s+$/, '');
  return one.length > LINE_WIDTH ? `${one.slice(0, LINE_WIDTH - 1)}…` : one;
}

// "L123" or "node2.txt:L123".
function at(line: number, source?: string): string {
  const l = line > 0 ? `L${line}` : '--';
  return source ? `${source}:${l}` : l;
}

// A remediation as one line, with its structured nudge.
function remedy(r: Remediation): string {
  const target = r.setting ?? r.unitDirective;
  const nudge = target
    ? ` [${target}${r.direction ? ` ${r.direction}` : ''}${r.value !== undefined ? ` ${String(r.value)}` : ''}]`
    : '';
  return `  - ${r.text}${nudge}`;
}

// Timeline rows, eliding the middle of long timelines.
function timelineRows(t: TimelineEntry[]): string[] {
  const row = (e: TimelineEntry) =>
    `  ${(e.ts ?? '').padEnd(19)}  ${at(e.line).padEnd(7)} ${e.kind.padEnd(16)} ${clip(e.text)}`;
  if (t.length <= TIMELINE_HEAD_ROWS + TIMELINE_TAIL_ROWS) return t.map(row);
  const skipped = t.length - TIMELINE_HEAD_ROWS - TIMELINE_TAIL_ROWS;
  return [
    ...t.slice(0, TIMELINE_HEAD_ROWS).map(row),
    `  … ${skipped} more events …`,
    ...t.slice(-TIMELINE_TAIL_ROWS).map(row),
  ];
}

// Root exception block.
function exceptionRows(d: Diagnosis): string[] {
  const e = d.rootException;
  if (!e) return [];
  const frames =
    e.frames.length > FRAME_ROWS ? [...e.frames.slice(0, 4), null, ...e.frames.slice(-(FRAME_ROWS - 4))] : e.frames;
  const rows = frames.flatMap((f) =>
    f ? [`    File "${f.file}", line ${f.line}, in ${f.func}`, ...(f.code ? [`      ${f.code}`] : [])] : ['    …'],
  );
  return ['', 'Root exception:', ...rows, ...`${e.type}: ${e.message}`.split('\n').map((l) => `  ${l}`)];
}

// Render the whole report.
export function renderDiagnosis(d: Diagnosis): string {
  const v = d.verdict;
  const detail = v.cause ? ` (cause: ${v.cause})` : v.detail ? ` (${v.detail})` : '';
  const head = `Verdict: ${v.class}${detail} — ${NO_CRASH[v.class] ?? ''}confidence ${v.confidence}`;
  const lines = [head, `  ${v.summary}`, '', 'Evidence:'];
  lines.push(
    ...(v.evidence.length
      ? v.evidence.map((e) => `  ${at(e.line, e.source).padEnd(7)} ${clip(e.text)}`)
      : ['  (no matching line)']),
  );
  lines.push(...exceptionRows(d));
  lines.push('', 'Timeline:', ...(d.timeline.length ? timelineRows(d.timeline) : ['  (no lifecycle events)']));
  lines.push('', 'Lifetimes:');
  d.lifetimes.forEach((l, i) => {
    const parts = [
      `pid ${l.pid ?? '?'}`,
      `lines ${l.firstLine}-${l.lastLine}`,
      l.ready ? 'ready' : 'not ready',
      `${l.requestsServed} requests`,
      l.exit ? `exit ${l.exit}` : 'no exit seen',
      l.cause ? `died of ${l.cause}` : '',
    ];
    lines.push(`  #${i + 1}${l.source ? ` ${l.source}` : ''} ${parts.filter(Boolean).join(', ')}`);
  });
  if (d.ranks?.length)
    lines.push(
      '',
      'Ranks:',
      ...d.ranks.map((r) => `  rank ${r.rank} ${r.host} ${r.unit}: ${r.class}${r.cause ? ` (cause: ${r.cause})` : ''}`),
    );
  if (v.links?.length) lines.push('', 'Linked:', ...v.links.map((l) => `  ${l.text}`));
  if (v.ruledOut.length) lines.push('', 'Ruled out:', ...v.ruledOut.map((r) => `  ${r.class}: ${r.why}`));
  if (v.remediation.length) lines.push('', 'What to change:', ...v.remediation.map(remedy));
  if (v.missing?.length) lines.push('', 'What the input lacked:', ...v.missing.map((m) => `  - ${m}`));
  if (v.collect?.length) lines.push('', 'Collect next:', ...v.collect.map((c) => `  $ ${c}`));
  return `${redactText(lines.join('\n'))}\n`;
}
