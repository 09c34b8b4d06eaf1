// Captures a real journal from a test host as a diagnose fixture folder (test/fixtures/journal/README.md):
// journal.txt (short) and journal.jsonl (json, only the fields diagnose reads), trimmed of llama.cpp's load chatter
// and redacted, plus expected.json.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { redactText } from '../../src/redact.js';
import type { TestHost } from './helpers/testhosts.js';
import { sshRun } from './tune-support.js';

/** Where captures go: the repository's fixture folders with SPECTUNE_UPDATE_FIXTURES=1, else a temp dir. */
const FIXTURES = resolve(import.meta.dirname, '../fixtures/journal/llamacpp');
/** llama.cpp's per-tensor and per-key load lines: hundreds, and no diagnosis reads them. */
const CHATTER =
  /llama_model_loader: - (?:kv|type)\s|print_info: |load_tensors: +(?:CPU|layer)|llama_context: |llama_kv_cache[_:]|graph_reserve:|create_tensor: |srv +log_server_r|gguf_init_from_file_impl: .*(?:kv|tensor)\[/;
/** Lines kept from each end of a capture after the chatter is dropped. */
const KEEP_HEAD = 40;
const KEEP_TAIL = 120;
/** The JSON fields diagnose reads (src/diagnose/json-fields.ts), plus priority and hostname for humans. */
const JSON_KEEP = [
  '__REALTIME_TIMESTAMP',
  '_HOSTNAME',
  'PRIORITY',
  'SYSLOG_IDENTIFIER',
  '_TRANSPORT',
  '_PID',
  '_COMM',
  '_SYSTEMD_UNIT',
  'UNIT',
  'MESSAGE',
];

/** One captured journal, in both forms. */
export interface Capture {
  text: string;
  jsonl: string;
}

// Drop the chatter, then keep both ends of what is left (the start-up and the failure).
function trimLines<T>(lines: T[], textOf: (l: T) => string): T[] {
  const kept = lines.filter((l) => !CHATTER.test(textOf(l)));
  return kept.length <= KEEP_HEAD + KEEP_TAIL ? kept : [...kept.slice(0, KEEP_HEAD), ...kept.slice(-KEEP_TAIL)];
}

// One JSON entry with only the kept fields, its message redacted.
function slimEntry(line: string): string {
  const e = JSON.parse(line) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of JSON_KEEP)
    if (e[k] !== undefined) out[k] = k === 'MESSAGE' && typeof e[k] === 'string' ? redactText(e[k]) : e[k];
  return JSON.stringify(out);
}

// The message of a JSON entry (byte arrays decoded) for the chatter filter.
function messageOf(line: string): string {
  const m = (JSON.parse(line) as { MESSAGE?: unknown }).MESSAGE;
  return Array.isArray(m) ? Buffer.from(m as number[]).toString('utf8') : String(m ?? '');
}

// Read a unit's journal since a host time, trimmed and redacted, in short and json form.
export function captureJournal(h: TestHost, unit: string, since: string): Capture {
  const text = sshRun(h, `journalctl -u ${unit} --no-pager -o short --since=${since}`)
    .split('\n')
    .filter((l) => l && !l.startsWith('-- '));
  const json = sshRun(h, `journalctl -u ${unit} --no-pager -o json --since=${since}`)
    .split('\n')
    .filter((l) => l.startsWith('{'));
  return {
    text: `${trimLines(text, (l) => l)
      .map(redactText)
      .join('\n')}\n`,
    jsonl: `${trimLines(json, messageOf).map(slimEntry).join('\n')}\n`,
  };
}

// Write a capture as the fixture folder real-<name>; returns the folder.
export function writeFixture(name: string, capture: Capture, expected: Record<string, unknown>): string {
  const dir =
    process.env.SPECTUNE_UPDATE_FIXTURES === '1'
      ? join(FIXTURES, `real-${name}`)
      : join(mkdtempSync(join(tmpdir(), 'spectune-llama-capture-')), `real-${name}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'journal.txt'), capture.text);
  writeFileSync(join(dir, 'journal.jsonl'), capture.jsonl);
  writeFileSync(join(dir, 'expected.json'), `${JSON.stringify(expected, null, 2)}\n`);
  return dir;
}
