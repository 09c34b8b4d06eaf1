import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { validateConfig } from '../config/index.js';
import { buildDemoConfig, DEMO_START_STEPS, renderDemoUnit } from './demo-config.js';
import { toServiceDef } from './demo-host.js';

describe('demo inputs', () => {
  it('the unit reads back as the process manager definition daemon-reload would make', () => {
    const text = renderDemoUnit({
      node: '/usr/bin/node',
      bin: '/opt/my spectune/bin/spectune.js',
      port: 31999,
      timeScale: 0.01,
    });
    const def = toServiceDef([{ path: '/etc/systemd/system/x.service', text }]);
    expect(def.argv.slice(0, 3)).toEqual(['/usr/bin/node', '/opt/my spectune/bin/spectune.js', 'sim']);
    expect(def.argv[def.argv.indexOf('--speculative-num-steps') + 1]).toBe(String(DEMO_START_STEPS));
    expect(def).toMatchObject({ restart: 'always', restartSec: 1, timeoutStopSec: 10 });
  });

  it('a drop-in ExecStart replaces the unit one', () => {
    const unit = renderDemoUnit({ node: 'node', bin: 'spectune.js', port: 1, timeScale: 1 });
    const dropIn = '[Service]\nExecStart=\nExecStart=node spectune.js sim --speculative-num-steps 5\n';
    const def = toServiceDef([
      { path: '/u', text: unit },
      { path: '/u.d/90-spectune.conf', text: dropIn },
    ]);
    expect(def.argv).toEqual(['node', 'spectune.js', 'sim', '--speculative-num-steps', '5']);
  });

  it('the campaign config is valid', () => {
    const v = validateConfig(buildDemoConfig(31999, './d.db'));
    expect(v.ok ? v.config.target.manager : v.errors).toBe('process');
  });

  it('examples/demo.yaml is exactly the campaign the demo runs (the demo only swaps in a free port)', () => {
    const file = parse(readFileSync(new URL('../../examples/demo.yaml', import.meta.url), 'utf8')) as unknown;
    expect(file).toEqual(buildDemoConfig(30000, './spectune-demo.db'));
  });
});
