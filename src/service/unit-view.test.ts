import { describe, expect, it } from 'vitest';
import { formatUnitView, judgeInForce, summarizeExecDiff, viewUnit } from './unit-view.js';

const unit = {
  path: '/etc/systemd/system/sg.service',
  text: '[Service]\nExecStart=/usr/bin/python -m sglang.launch_server --port 30000 --max-running-requests 48\n',
};
const ours = {
  path: '/etc/systemd/system/sg.service.d/90-spectune.conf',
  text: '[Service]\nExecStart=\nExecStart=/usr/bin/python -m sglang.launch_server --port 30000 --max-running-requests 32\nTimeoutStopSec=60\n',
};
const trial = {
  path: '/run/systemd/system/sg.service.d/90-spectune.trial.conf',
  text: '# spectune trial version 5\n[Service]\nExecStart=\nExecStart=/usr/bin/python -m sglang.launch_server --port 30000 --max-running-requests 64\n',
};
const operator = {
  path: '/etc/systemd/system/sg.service.d/95-operator.conf',
  text: '[Service]\nEnvironment="STEPS=10"\nTimeoutStopSec=5\n',
};
const early = {
  path: '/etc/systemd/system/sg.service.d/10-limits.conf',
  text: '[Service]\nTimeoutStopSec=30\nLimitNOFILE=65536\n',
};

describe('viewUnit', () => {
  it("lists every file in order, marks spectune's, and diffs ExecStart against the operator's unit", () => {
    const v = viewUnit([unit, early, ours]);
    expect(v.files.map((f) => f.kind)).toEqual(['unit', 'foreign', 'spectune']);
    expect(v.spectunePath).toBe(ours.path);
    expect(v.overrides).toEqual([]);
    expect(v.execDiff).toContain('---max-running-requests 48');
    expect(v.execDiff).toContain('+--max-running-requests 32');
    expect(summarizeExecDiff(v.execDiff)).toBe('---max-running-requests 48, +--max-running-requests 32');
    const text = formatUnitView(v).join('\n');
    expect(text).toContain(
      "the unit file's own ExecStart is overridden by /etc/systemd/system/sg.service.d/90-spectune.conf",
    );
  });

  it('warns about a later foreign drop-in that sets a key spectune sets, with the value in force', () => {
    const v = viewUnit([unit, ours, operator]);
    expect(v.overrides).toEqual([
      { path: operator.path, key: 'Environment', effective: 'STEPS=10' },
      { path: operator.path, key: 'TimeoutStopSec', effective: '5' },
    ]);
    expect(formatUnitView(v).join('\n')).toContain(
      "warning: /etc/systemd/system/sg.service.d/95-operator.conf (after spectune's drop-in) overrides TimeoutStopSec; in force: TimeoutStopSec=5",
    );
  });

  it('an earlier foreign drop-in overrides nothing; no spectune drop-in: no diff, no override', () => {
    expect(viewUnit([unit, early, ours]).overrides).toEqual([]);
    const v = viewUnit([unit, operator]);
    expect(v.spectunePath).toBeNull();
    expect(v.overrides).toEqual([]);
    expect(v.execDiff).toBe('');
  });

  it("recognises the runtime trial drop-in as spectune's (candidate in force, provisional)", () => {
    const v = viewUnit([unit, ours, trial]);
    expect(v.trial).toBe(true);
    expect(v.spectunePath).toBe(trial.path);
    expect(v.operatorExecStart).toContain('--max-running-requests 48');
    expect(v.inForceExecStart).toContain('--max-running-requests 64');
    expect(formatUnitView(v).join('\n')).toContain('candidate in force (provisional)');
  });
});

describe('judgeInForce', () => {
  it("warns when spectune's drop-in is in force, naming the file and the diff summary", () => {
    const j = judgeInForce(viewUnit([unit, ours]), 'sg.service');
    expect(j.status).toBe('WARN');
    expect(j.summary).toContain('/etc/systemd/system/sg.service.d/90-spectune.conf is in force');
    expect(j.summary).toContain('---max-running-requests 48, +--max-running-requests 32');
  });
  it('warns naming the later foreign drop-in and the value in force', () => {
    const j = judgeInForce(viewUnit([unit, ours, operator]), 'sg.service');
    expect(j.summary).toContain(
      "95-operator.conf comes after spectune's drop-in and overrides Environment (in force: Environment=STEPS=10)",
    );
    expect(j.fix).toContain('move /etc/systemd/system/sg.service.d/95-operator.conf');
  });
  it('passes when the unit runs as written', () => {
    expect(judgeInForce(viewUnit([unit, early]), 'sg.service').status).toBe('PASS');
  });
});
