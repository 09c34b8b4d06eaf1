import { expect, it } from 'vitest';
import { proposeSpace } from './space.js';
import type { EngineUnit } from './types.js';

const unit = (settings: EngineUnit['settings']): EngineUnit => ({
  unit: 'sglang.service',
  source: 'systemd' as EngineUnit['source'],
  engine: 'sglang',
  command: 'python -m sglang.launch_server',
  model: 'm',
  port: 30000,
  portIsDefault: true,
  settings,
  speculative: settings as EngineUnit['speculative'],
  speculativeEnabled: true,
  apiKeySet: false,
  nodes: null,
  warnings: [],
});

it('writes the generated space comments without the project-internal "the seed": it says what failed and how', () => {
  const why = proposeSpace(
    unit({ speculative_algorithm: 'EAGLE', speculative_num_steps: 3, speculative_eagle_topk: 1 }),
  )
    .flatMap((d) => d.why)
    .join('\n');
  expect(why).not.toMatch(/\bseed\b/i);
  expect(why).toContain('Qwen3.5-122B-A10B on two nodes failed to start at steps=10: KV cache out of memory');
});
