import { describe, expect, it } from 'vitest';
import { ToolError } from '../errors.js';
import {
  dropInPath,
  effectiveEnvironment,
  effectiveListValue,
  normalizeUnitName,
  parseDropIn,
  renderDropIn,
  splitCatOutput,
} from './unit.js';

const CAT = `# /etc/systemd/system/llm.service
[Unit]
Description=LLM

[Service]
Environment="HF_HOME=/data/hf" PORT=30000
ExecStart=/usr/bin/python3 -m sglang.launch_server \\
  --model-path Qwen/Qwen3 --port 30000
Restart=always

# /etc/systemd/system/llm.service.d/10-operator.conf
[Service]
Environment=PORT=31000

# /etc/systemd/system/llm.service.d/90-spectune.conf
[Service]
ExecStart=
ExecStart=/usr/bin/python3 -m sglang.launch_server --model-path Qwen/Qwen3 --port 30000 --speculative-num-steps 3
`;

describe('normalizeUnitName', () => {
  it('appends .service and accepts systemd names', () => {
    expect(normalizeUnitName('sglang-qwen')).toBe('sglang-qwen.service');
    expect(normalizeUnitName('llm@gpu0.service')).toBe('llm@gpu0.service');
  });
  it.each([
    'x; rm -rf /',
    '$(reboot).service',
    '--help',
    '-x.service',
    'a b.service',
    'x\n.service',
    '../../etc/passwd',
    '`id`',
    'a/b.service',
    '',
  ])('refuses hostile name %j with E_UNSAFE_VALUE', (name) => {
    expect(() => normalizeUnitName(name)).toThrow(ToolError);
    try {
      normalizeUnitName(name);
    } catch (e) {
      expect((e as ToolError).code).toBe('E_UNSAFE_VALUE');
    }
  });
});

describe('systemctl cat parsing', () => {
  const files = splitCatOutput(CAT);
  it('splits the unit and its drop-ins', () => {
    expect(files.map((f) => f.path)).toEqual([
      '/etc/systemd/system/llm.service',
      '/etc/systemd/system/llm.service.d/10-operator.conf',
      '/etc/systemd/system/llm.service.d/90-spectune.conf',
    ]);
    expect(files[0].text).toContain('Restart=always');
  });
  it('finds the effective ExecStart (reset by an empty assignment, continuation lines joined)', () => {
    expect(effectiveListValue(files.slice(0, 2), 'Service', 'ExecStart')?.value).toBe(
      '/usr/bin/python3 -m sglang.launch_server  --model-path Qwen/Qwen3 --port 30000',
    );
    expect(effectiveListValue(files, 'Service', 'ExecStart')).toEqual({
      value: '/usr/bin/python3 -m sglang.launch_server --model-path Qwen/Qwen3 --port 30000 --speculative-num-steps 3',
      source: '/etc/systemd/system/llm.service.d/90-spectune.conf',
    });
  });
  it('merges Environment= with later assignments winning', () => {
    expect(effectiveEnvironment(files)).toEqual({ HF_HOME: '/data/hf', PORT: '31000' });
  });
});

describe('renderDropIn', () => {
  it('resets ExecStart, quotes environment and round-trips', () => {
    const text = renderDropIn({
      execStart: '/bin/engine --port 1',
      environment: { NOTE: 'a "b" 50%' },
      timeoutStopSec: 120,
    });
    expect(text).toContain('[Service]\nExecStart=\nExecStart=/bin/engine --port 1\n');
    expect(text).toContain('Environment="NOTE=a \\"b\\" 50%%"');
    expect(text).toContain('TimeoutStopSec=120');
    const back = parseDropIn({ path: dropInPath('x.service'), text });
    expect(back.execStart).toBe('/bin/engine --port 1');
    expect(back.timeoutStopSec).toBe(120);
  });
  it('refuses a line break in ExecStart or an environment value', () => {
    expect(() =>
      renderDropIn({ execStart: '/bin/a\nExecStartPre=/bin/evil', environment: {}, timeoutStopSec: null }),
    ).toThrow(/line break/);
    expect(() =>
      renderDropIn({ execStart: '/bin/a', environment: { X: 'a\n[Service]' }, timeoutStopSec: null }),
    ).toThrow(/line break/);
    expect(() => renderDropIn({ execStart: '/bin/a', environment: { 'X Y': '1' }, timeoutStopSec: null })).toThrow(
      /variable name/,
    );
  });
  it('puts the drop-in where systemd reads administrator drop-ins', () => {
    expect(dropInPath('llm.service')).toBe('/etc/systemd/system/llm.service.d/90-spectune.conf');
  });
});
