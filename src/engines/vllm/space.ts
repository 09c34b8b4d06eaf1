// The search space `spectune init` proposes for a vllm unit (pure).
import type { SpaceDimension, SpaceInput } from '../types.js';
import { distinct, num } from '../space-values.js';

/** vLLM: num_speculative_tokens inside --speculative-config, else the concurrent-sequence cap. */
export function vllmSpace(u: SpaceInput): SpaceDimension[] {
  const s = u.settings;
  if (!u.speculativeEnabled) {
    const seqs = num(s.max_num_seqs) ?? 256;
    return [
      {
        key: 'max_num_seqs',
        value: { values: distinct([Math.max(1, Math.round(seqs / 2)), seqs, seqs * 2]) },
        why: [
          'speculative decoding is off in this unit (no --speculative-config); spectune does not add a method for you:',
          'enable it (e.g. --speculative-config \'{"method": "mtp", "num_speculative_tokens": 1}\') and run init again.',
          `Until then this tunes the concurrent-sequence cap around its current value ${seqs}.`,
        ],
      },
    ];
  }
  const n = num(s.num_speculative_tokens) ?? 1;
  const max = Math.min(10, Math.max(5, n * 2));
  return [
    {
      key: 'num_speculative_tokens',
      value: { min: 1, max: Math.max(max, n) },
      why: [
        `${String(s.speculative_method ?? 'speculative')} speculation in force with num_speculative_tokens=${n} (the baseline), patched inside`,
        `the unit's own --speculative-config form. 1..${Math.max(max, n)}: acceptance falls with every extra token; the search stops at the plateau.`,
      ],
    },
  ];
}
