// The search space `spectune init` proposes for a sglang unit (pure).
import type { SpaceDimension, SpaceInput } from '../types.js';
import { distinct, num } from '../space-values.js';

/** SGLang: speculative_num_steps (EAGLE/EAGLE3/NEXTN/STANDALONE), draft tokens for NGRAM, else the CUDA-graph limit. */
export function sglangSpace(u: SpaceInput): SpaceDimension[] {
  const s = u.settings;
  if (!u.speculativeEnabled) {
    const bs = num(s.cuda_graph_max_bs);
    return [
      {
        key: 'cuda_graph_max_bs',
        value: { values: distinct([...(bs ? [bs] : []), 64, 128, 256]) },
        why: [
          'speculative decoding is off in this unit (no --speculative-algorithm); spectune does not add a draft for you:',
          'enable it in the unit (e.g. --speculative-algorithm EAGLE with its draft) and run init again.',
          'Until then this tunes the largest CUDA-graph batch, which is safe to change and moves decode speed.',
        ],
      },
    ];
  }
  const algo = String(s.speculative_algorithm ?? '');
  if (algo === 'NGRAM') {
    const n = num(s.speculative_num_draft_tokens) ?? 4;
    return [
      {
        key: 'speculative_num_draft_tokens',
        value: { values: distinct([n, 2, 4, 8, 16]) },
        why: [`NGRAM speculation in force with ${n} draft tokens: try shorter and longer drafts around it.`],
      },
    ];
  }
  const steps = num(s.speculative_num_steps) ?? 3;
  const max = Math.min(10, Math.max(6, steps * 2));
  const topk = num(s.speculative_eagle_topk) ?? 1;
  return [
    {
      key: 'speculative_num_steps',
      value: { min: 1, max: Math.max(max, steps) },
      why: [
        `${algo} speculation in force with speculative_num_steps=${steps} (the baseline, measured first).`,
        `1..${Math.max(max, steps)}: the adaptive search climbs from the baseline while the gain beats the noise margin and stops at the`,
        'plateau; more steps reserve more KV cache per request (Qwen3.5-122B-A10B on two nodes failed to start at steps=10: KV cache out of memory) and fewer fit.',
        ...(topk === 1
          ? ['speculative_eagle_topk=1: SGLang sets draft tokens = steps + 1, so they follow steps.']
          : [`speculative_eagle_topk=${topk}: draft tokens stay as set in the unit.`]),
      ],
    },
  ];
}
