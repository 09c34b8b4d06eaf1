import { describe, expect, it } from 'vitest';
import { planFold } from './fold.js';
import { effectiveEnvironment, effectiveListValue, parseUnitFile } from './unit.js';

const unit = {
  path: '/etc/systemd/system/sg.service',
  text: '[Unit]\nDescription=sg\n\n[Service]\nExecStart=/usr/bin/python -m sglang.launch_server \\\n  --port 30000 --max-running-requests 48\nTimeoutStopSec=30\nRestart=on-failure\n\n[Install]\nWantedBy=multi-user.target\n',
};
const ours = {
  path: '/etc/systemd/system/sg.service.d/90-spectune.conf',
  text: '# Managed by spectune\n[Service]\nExecStart=\nExecStart=/usr/bin/python -m sglang.launch_server --port 30000 --max-running-requests 32\nEnvironment="STEPS=4"\nTimeoutStopSec=60\n',
};

describe('planFold', () => {
  it('writes the ExecStart, Environment and TimeoutStopSec in force into the unit file: the same effective config without the drop-in', () => {
    const p = planFold([unit, ours], 'sg.service');
    const after = [{ path: unit.path, text: p.unitAfter }];
    expect(effectiveListValue(after, 'Service', 'ExecStart')?.value).toBe(
      effectiveListValue([unit, ours], 'Service', 'ExecStart')?.value,
    );
    expect(effectiveEnvironment(after)).toEqual({ STEPS: '4' });
    expect(
      parseUnitFile(after[0])
        .filter((e) => e.key === 'TimeoutStopSec')
        .map((e) => e.value),
    ).toEqual(['60']);
    expect(p.unitAfter).toContain('Restart=on-failure\n\n[Install]\nWantedBy=multi-user.target\n');
    expect(p.diff).toContain('-  --port 30000 --max-running-requests 48');
    expect(p.diff).toContain(
      '+ExecStart=/usr/bin/python -m sglang.launch_server --port 30000 --max-running-requests 32',
    );
    expect(p.dropInPath).toBe(ours.path);
  });
  it('refuses a unit file outside /etc/systemd/system, naming what to do', () => {
    expect(() => planFold([{ ...unit, path: '/usr/lib/systemd/system/sg.service' }, ours], 'sg.service')).toThrow(
      /not under \/etc\/systemd\/system/,
    );
  });
  it('refuses when there is no spectune drop-in, or a later drop-in overrides it', () => {
    expect(() => planFold([unit], 'sg.service')).toThrow(/nothing to fold/);
    expect(() =>
      planFold(
        [unit, ours, { path: '/etc/systemd/system/sg.service.d/95-op.conf', text: '[Service]\nTimeoutStopSec=5\n' }],
        'sg.service',
      ),
    ).toThrow(/95-op.conf overrides/);
  });
});
