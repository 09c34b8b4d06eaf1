import { describe, expect, it } from 'vitest';
import type { Diagnosis, DiagnosisClass, Verdict } from '../diagnose/index.js';
import { asCrashLoop } from './crash-loop.js';
import type { Tracker } from './readiness.js';

const verdict = (cls: DiagnosisClass, crashed?: boolean): Verdict => ({
  class: cls,
  cause: null,
  confidence: 'high',
  summary: `${cls} summary`,
  evidence: [],
  ruledOut: [],
  remediation: [],
  ...(crashed === undefined ? {} : { crashed }),
});
const diagnosis = (v: Verdict): Diagnosis => ({ verdict: v }) as unknown as Diagnosis;
const tracker = { mainPids: [101, 102, 103], restarts: 2, fatal: [], entries: [] } as unknown as Tracker;

describe('asCrashLoop', () => {
  it('keeps what each start died of as the cause', () => {
    const d = asCrashLoop(diagnosis(verdict('kv_cache_oom', true)), tracker, true);
    expect(d.verdict).toMatchObject({ class: 'crash_loop', cause: 'kv_cache_oom' });
    expect(d.verdict.summary).toMatch(
      /^crash loop: systemd restarted the unit 2 time\(s\), 3 starts seen; each start dies of kv_cache_oom\./,
    );
  });

  it.each(['healthy', 'starting', 'clean_stop', 'unknown'] as DiagnosisClass[])(
    'names no cause when the window shows no failure (%s)',
    (cls) => {
      const d = asCrashLoop(diagnosis(verdict(cls, false)), tracker, true);
      expect(d.verdict).toMatchObject({ class: 'crash_loop', cause: null });
      expect(d.verdict.summary).toContain('an unknown cause');
    },
  );

  it('leaves a diagnosis alone when the unit was not looping', () => {
    const d = diagnosis(verdict('kv_cache_oom', true));
    expect(asCrashLoop(d, tracker, false)).toBe(d);
  });
});
