// One unit-name rule for every command: a short name means NAME.service wherever a unit is named (flags, config,
// doctor, init, the process manager, diagnose), and a name the rule refuses is refused everywhere.
import { describe, expect, it } from 'vitest';
import { resolveDoctorPlan } from '../../src/app/doctor-target.js';
import { resolveTarget } from '../../src/app/service-target.js';
import { validateConfig } from '../../src/config/index.js';
import { chooseUnit } from '../../src/onboard/index.js';
import type { EngineUnit } from '../../src/onboard/types.js';
import { toUnitName } from '../../src/procman/index.js';
import { normalizeUnitName } from '../../src/unit-name.js';

const config = (unit: string) => ({
  target: { engine: 'sglang', endpoint: 'http://10.0.0.5:30000', hosts: [{ host: 'root@10.0.0.5', unit }] },
  space: { speculative_num_steps: { values: [3, 4] } },
});

describe('the one unit-name rule', () => {
  it('gives every entry point the same full name for a short one', async () => {
    expect(normalizeUnitName('sglang-qwen')).toBe('sglang-qwen.service');
    expect(normalizeUnitName('sglang-qwen.service')).toBe('sglang-qwen.service');
    const fromConfig = validateConfig(config('sglang-qwen'));
    expect(fromConfig.errors).toEqual([]);
    expect(fromConfig.config?.target.hosts[0].unit).toBe('sglang-qwen.service');
    expect((await resolveTarget({ host: 'root@h', unit: 'sglang-qwen', endpoint: 'http://h:30000' }, {})).unit).toBe(
      'sglang-qwen.service',
    );
    expect((await resolveDoctorPlan({ host: 'root@h', unit: 'sglang-qwen', engine: 'sglang' }, {})).hosts[0].unit).toBe(
      'sglang-qwen.service',
    );
    expect(toUnitName('sglang-qwen')).toBe('sglang-qwen.service');
    const found = [{ unit: 'sglang-qwen.service', source: 'systemd', engine: 'sglang' } as EngineUnit];
    expect(chooseUnit(found, 'sglang-qwen', 'h').unit).toBe('sglang-qwen.service');
  });

  it('refuses an unsafe name everywhere with a one-line error', async () => {
    const bad = 'x;reboot';
    expect(() => normalizeUnitName(bad)).toThrow(expect.objectContaining({ code: 'E_UNSAFE_VALUE' }));
    expect(() => toUnitName(bad)).toThrow(expect.objectContaining({ code: 'E_UNSAFE_VALUE' }));
    await expect(resolveDoctorPlan({ host: 'root@h', unit: bad }, {})).rejects.toMatchObject({
      code: 'E_UNSAFE_VALUE',
    });
    await expect(resolveTarget({ host: 'root@h', unit: bad }, {})).rejects.toMatchObject({ code: 'E_UNSAFE_VALUE' });
    expect(validateConfig(config(bad)).errors).toEqual([
      'target.hosts[0].unit: expected a systemd unit name (letters, digits and ":_.@-", e.g. "sglang-qwen.service"), got "x;reboot"',
    ]);
  });
});
