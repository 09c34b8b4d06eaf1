import { describe, expect, it } from 'vitest';
import { leaseOwner, leasePaths, leaseSteps, renderLeaseScript } from './lease.js';
import { planDeploy, renderPlan } from './plan.js';
import { isOperatorsOwnConfig, type UnitFile } from './unit.js';

const UNIT_TEXT =
  '[Service]\nExecStart=/usr/bin/python3 -m sglang.launch_server --port 30000 --speculative-num-steps 3\n';

describe('commit-confirmed lease (pure parts)', () => {
  it('puts the candidate in /run under a name that sorts after the /etc drop-in', () => {
    const p = leasePaths('sglang.service');
    expect(p.trial).toBe('/run/systemd/system/sglang.service.d/90-spectune.trial.conf');
    expect(p.trial.split('/').pop()! > '90-spectune.conf').toBe(true);
    expect(p.timerUnit).toBe('spectune-lease-sglang');
  });

  it('renders a script that quotes every path and acts only once the lease lapsed', () => {
    const s = renderLeaseScript("we'ird.service");
    expect(s).toContain(`unit='we'\\''ird.service'`);
    expect(s).toMatch(/\[ "\$now" -lt \$\(\(touched \+ secs\)\) \] && exit 0/);
    expect(s.indexOf('rm -f "$trial"')).toBeLessThan(s.indexOf('systemctl restart --no-block "$unit"'));
    expect(s).toContain('grep -qF -- "$owner" "$state/lock"');
  });

  it('finishes a confirm cut short after the move to /etc, and puts /etc back to known-good when the candidate is still in /run', () => {
    const s = renderLeaseScript('sglang.service');
    expect(s).toContain("etc='/etc/systemd/system/sglang.service.d/90-spectune.conf'");
    // the candidate already in /etc with no /run copy: marked known-good, not left as current != good
    expect(s).toMatch(
      /if \[ ! -e "\$trial" \] && \[ -n "\$prov" \] && cmp -s "\$state\/dropins\/\$prov.conf" "\$etc"; then/,
    );
    expect(s).toMatch(/for m in good current; do printf/);
    // the restore writes /etc from the kept known-good version before the reload (or removes it for none)
    expect(s.indexOf('cp -p "$state/dropins/$good.conf"')).toBeGreaterThan(s.indexOf('rm -f "$trial"'));
    expect(s.indexOf('cp -p "$state/dropins/$good.conf"')).toBeLessThan(s.indexOf('systemctl daemon-reload'));
    expect(s).toContain('if [ "$good" = none ]; then rm -f "$etc"');
  });

  it('names its owner the way the host lock record spells it', () => {
    const lock = JSON.stringify({ token: 't', owner: { user: 'op', machine: 'ws-1', pid: 4242 }, command: 'tune' });
    expect(lock).toContain(leaseOwner('ws-1', 4242));
    expect(lock).not.toContain(leaseOwner('ws-1', 424));
  });

  it('shows the lease in a plan: the timer, /run, the confirm step', () => {
    const plan = planDeploy(
      UNIT_TEXT,
      [],
      'sglang',
      { speculative_num_steps: 4 },
      { unit: 'sglang.service', lease: { ms: 300_000 } },
    );
    expect(plan.dropInPath).toBe('/run/systemd/system/sglang.service.d/90-spectune.trial.conf');
    const text = renderPlan(plan);
    expect(text).toContain('provisional for 300 s');
    expect(text).toMatch(/systemd-run --unit=spectune-lease-sglang/);
    expect(text).toMatch(/confirm it, from \/run to \/etc as known-good/);
    expect(leaseSteps('sglang.service', { ms: 300_000 })[0]).toContain('lease 5 min');
    const plain = planDeploy(UNIT_TEXT, [], 'sglang', { speculative_num_steps: 4 }, { unit: 'sglang.service' });
    expect(plain.dropInPath).toBe('/etc/systemd/system/sglang.service.d/90-spectune.conf');
    expect(renderPlan(plain)).not.toContain('provisional');
  });

  it("tells a drop-in that only restates the operator's unit from one that changes it", () => {
    const unit: UnitFile = { path: '/etc/systemd/system/sglang.service', text: UNIT_TEXT };
    const same: UnitFile = {
      path: '/etc/systemd/system/sglang.service.d/90-spectune.conf',
      text: '[Service]\nExecStart=\nExecStart=/usr/bin/python3 -m sglang.launch_server --port 30000 --speculative-num-steps 3\n',
    };
    const other: UnitFile = { ...same, text: same.text.replace('steps 3', 'steps 4') };
    const withStop: UnitFile = { ...same, text: `${same.text}TimeoutStopSec=60\n` };
    const isOurs = (f: UnitFile) => f.path.includes('90-spectune');
    expect(isOperatorsOwnConfig([unit, same], same, isOurs)).toBe(true);
    expect(isOperatorsOwnConfig([unit, other], other, isOurs)).toBe(false);
    expect(isOperatorsOwnConfig([unit, withStop], withStop, isOurs)).toBe(false);
  });
});
