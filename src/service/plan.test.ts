import { describe, expect, it } from 'vitest';
import { readExecStart } from '../engines/command-line.js';
import { planDeploy, renderPlan } from './plan.js';
import { splitCatOutput } from './unit.js';

const EXEC =
  '/usr/local/bin/node /opt/spectune/bin/spectune.js sim --model-path Qwen/Qwen3.5-122B-A10B --port 30000 --host 0.0.0.0 --speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 --sim-time-scale 0.02';
const UNIT = `[Unit]\nDescription=sim\n\n[Service]\nExecStart=${EXEC}\nRestart=always\nRestartSec=1\nTimeoutStopSec=5\n`;

describe('planDeploy', () => {
  it('overrides ExecStart in a drop-in, changing only the requested flag', () => {
    const plan = planDeploy(UNIT, [], 'sglang', { speculative_num_steps: 10 }, { unit: 'sim.service' });
    expect(plan.dropInPath).toBe('/etc/systemd/system/sim.service.d/90-spectune.conf');
    expect(plan.dropInText).toContain(
      '[Service]\nExecStart=\nExecStart=/usr/local/bin/node /opt/spectune/bin/spectune.js sim ',
    );
    expect(plan.newExecStart).toBe(EXEC.replace('--speculative-num-steps 3', '--speculative-num-steps 10'));
    expect(plan.before.speculative_num_steps).toBe(3);
    expect(plan.config.speculative_num_steps).toBe(10);
    expect(plan.diff).toContain('---/dev/null'.slice(0, 3));
    expect(plan.diff).toContain('---speculative-num-steps 3\n+--speculative-num-steps 10');
    expect(plan.steps.map((s) => (s.kind === 'exec' ? s.argv.join(' ') : `write ${s.path}`))).toEqual([
      'write /var/lib/spectune/sim.service/dropins/<n>.conf',
      'write /etc/systemd/system/sim.service.d/90-spectune.conf',
      'systemctl daemon-reload',
      'write /var/lib/spectune/sim.service/current',
      'systemctl restart sim.service',
    ]);
    expect(plan.noop).toBe(false);
  });

  it('warns that SGLang will override draft tokens set with topk 1, and with what', () => {
    const plan = planDeploy(
      UNIT,
      [],
      'sglang',
      { speculative_num_steps: 3, speculative_num_draft_tokens: 8 },
      { unit: 'sim.service' },
    );
    expect(plan.warnings).toContain(
      '--speculative-num-draft-tokens: with --speculative-eagle-topk 1 SGLang forces speculative_num_draft_tokens to steps + 1 = 4',
    );
    expect(renderPlan(plan)).toContain(
      'warning: --speculative-num-draft-tokens: with --speculative-eagle-topk 1 SGLang forces speculative_num_draft_tokens to steps + 1 = 4',
    );
    expect(
      planDeploy(
        UNIT,
        [],
        'sglang',
        { speculative_num_steps: 3, speculative_num_draft_tokens: 4 },
        { unit: 'sim.service' },
      ).warnings,
    ).toEqual([]);
  });

  it('builds on the drop-in in force and keeps its TimeoutStopSec and Environment', () => {
    const first = planDeploy(
      UNIT,
      [],
      'sglang',
      { speculative_num_steps: 4 },
      { unit: 'sim.service', timeoutStopSec: 60, environment: { SIM_NOTE: 'x' } },
    );
    const ours = { path: first.dropInPath, text: first.dropInText };
    const second = planDeploy(UNIT, [ours], 'sglang', { speculative_eagle_topk: 2 }, { unit: 'sim.service' });
    expect(second.currentExecStart).toBe(first.newExecStart);
    expect(second.config).toMatchObject({ speculative_num_steps: 4, speculative_eagle_topk: 2 });
    expect(second.dropInText).toContain('TimeoutStopSec=60');
    expect(second.dropInText).toContain('Environment="SIM_NOTE=x"');
    expect(second.diff).toContain('-ExecStart=/usr/local/bin/node');
    expect(planDeploy(UNIT, [ours], 'sglang', { speculative_num_steps: 4 }, { unit: 'sim.service' }).noop).toBe(true);
  });

  it('quotes a hostile flag value so that it stays one argument', () => {
    const evil = 'x; touch /tmp/pwned $(id) `id` "q" \'s\' 50% \\';
    const plan = planDeploy(UNIT, [], 'sglang', { speculative_draft_model_path: evil }, { unit: 'sim.service' });
    const argv = readExecStart(plan.newExecStart, {}, { engine: 'sglang' }).argv;
    const i = argv.indexOf('--speculative-draft-model-path');
    expect(i).toBeGreaterThan(0);
    expect(argv[i + 1]).toBe(evil);
  });

  it('refuses a value with a line break (it would add directives to the drop-in)', () => {
    expect(() =>
      planDeploy(
        UNIT,
        [],
        'sglang',
        { speculative_draft_model_path: 'a\nExecStartPre=/bin/sh -c id' },
        { unit: 'sim.service' },
      ),
    ).toThrow(/line break|unsafe|newline|control/i);
  });

  it('refuses when a later drop-in would shadow the candidate ExecStart', () => {
    const later = {
      path: '/etc/systemd/system/sim.service.d/99-local.conf',
      text: '[Service]\nExecStart=\nExecStart=/bin/other\n',
    };
    expect(() => planDeploy(UNIT, [later], 'sglang', { speculative_num_steps: 4 }, { unit: 'sim.service' })).toThrow(
      /override/,
    );
  });

  it('renders a dry run with the diff and the steps, secrets redacted', () => {
    const unit = UNIT.replace('--port 30000', '--port 30000 --api-key sk-abcdefghijklmnopqrstuvwxyz');
    const text = renderPlan(planDeploy(unit, [], 'sglang', { speculative_num_steps: 5 }, { unit: 'sim.service' }));
    expect(text).toContain('systemctl daemon-reload');
    expect(text).toContain('+--speculative-num-steps 5');
    expect(text).not.toContain('sk-abcdefghijklmnopqrstuvwxyz');
  });

  it('reads the unit file and drop-ins from systemctl cat output', () => {
    const files = splitCatOutput(
      `# /etc/systemd/system/sim.service\n${UNIT}\n# /etc/systemd/system/sim.service.d/90-spectune.conf\n[Service]\nExecStart=\nExecStart=${EXEC.replace('steps 3', 'steps 7')}\n`,
    );
    const plan = planDeploy(
      files[0].text,
      files.slice(1),
      'sglang',
      { speculative_num_steps: 8 },
      { unit: 'sim.service', unitPath: files[0].path },
    );
    expect(plan.before.speculative_num_steps).toBe(7);
    expect(plan.previousDropIn).toContain('steps 7');
  });
});
