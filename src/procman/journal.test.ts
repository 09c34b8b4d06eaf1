import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LineSplitter, ProcJournal, type JournalFields } from './journal.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function entry(unit: string, message: string): JournalFields {
  return {
    PRIORITY: '6',
    SYSLOG_IDENTIFIER: 'node',
    _PID: '42',
    _COMM: 'node',
    _TRANSPORT: 'stdout',
    _SYSTEMD_UNIT: unit,
    MESSAGE: message,
  };
}

describe('LineSplitter', () => {
  it('splits like journald: newline and NUL end records, trailing blanks stripped, empty lines dropped', () => {
    const out: string[] = [];
    const s = new LineSplitter();
    s.push('first  \n\n  indented\tline\npar', (l) => out.push(l));
    s.push('tial\0after-nul\n   \nlast', (l) => out.push(l));
    s.flush((l) => out.push(l));
    expect(out).toEqual(['first', '  indented\tline', 'partial', 'after-nul', 'last']);
  });

  it('cuts lines longer than LineMax (48K)', () => {
    const out: string[] = [];
    const s = new LineSplitter();
    s.push(`${'x'.repeat(100_000)}\n`, (l) => out.push(l));
    expect(out.map((l) => l.length)).toEqual([49_152, 49_152, 1_696]);
  });
});

describe('ProcJournal', () => {
  it('writes journalctl -o json shaped lines and reads them by unit after a cursor', () => {
    const dir = mkdtempSync(join(tmpdir(), 'procman-journal-'));
    dirs.push(dir);
    const j = new ProcJournal(join(dir, 'journal.jsonl'));
    j.append(entry('a.service', 'one'));
    j.append({ ...entry('init.scope', 'Started a.service.'), UNIT: 'a.service', SYSLOG_IDENTIFIER: 'systemd' });
    j.append(entry('b.service', 'other unit'));
    const first = j.read('a.service');
    expect(first.entries.map((e) => e.MESSAGE)).toEqual(['one', 'Started a.service.']);
    const line = JSON.parse(readFileSync(join(dir, 'journal.jsonl'), 'utf8').split('\n')[0]) as Record<string, unknown>;
    expect(Object.values(line).every((v) => typeof v === 'string')).toBe(true);
    expect(line).toMatchObject({ _PID: '42', MESSAGE: 'one', SYSLOG_IDENTIFIER: 'node', _SYSTEMD_UNIT: 'a.service' });
    expect(String(line.__REALTIME_TIMESTAMP)).toMatch(/^\d{16}$/);
    j.append(entry('a.service', 'two'));
    expect(j.read('a.service', first.cursor).entries.map((e) => e.MESSAGE)).toEqual(['two']);
    j.close();
    const reopened = new ProcJournal(join(dir, 'journal.jsonl'));
    const next = reopened.append(entry('a.service', 'three'));
    expect(next?.__CURSOR).toMatch(/^i=5;/);
    expect(reopened.read(null, first.cursor).entries.map((e) => e.MESSAGE)).toEqual(['two', 'three']);
    expect(reopened.read(null).entries).toHaveLength(5);
    reopened.close();
    expect(reopened.append(entry('a.service', 'late'))).toBeNull();
  });
});
