// The search space `spectune init` proposes for a llamacpp unit (pure).
import type { SpaceDimension, SpaceInput } from '../types.js';
import { distinct, num } from '../space-values.js';

/** llama-server: the draft length when a draft type is on; turning draft-simple on when only -md is given. */
export function llamaSpace(u: SpaceInput): SpaceDimension[] {
  const s = u.settings;
  if (u.speculativeEnabled) {
    const n = num(s.spec_draft_n_max);
    return [
      {
        key: 'spec_draft_n_max',
        value: { values: distinct([...(n ? [n] : []), 2, 4, 8, 16]) },
        why: [
          `--spec-type ${String(s.spec_type)} in force${n ? ` with --spec-draft-n-max ${n}` : ''} (the baseline).`,
          'Draft lengths 2..16: with a good draft longer drafts pay (8 was best for a perfect pair here), with a poor one',
          'they cost more than they save; the search measures both ends.',
        ],
      },
    ];
  }
  if (s.model_draft !== undefined) {
    return [
      {
        key: 'spec_type',
        value: { values: ['draft-simple'] },
        why: [
          'a draft model (-md) is loaded but --spec-type is not set, so speculation is OFF; every candidate turns draft-simple on',
          '(the baseline, as running now, is measured first).',
        ],
      },
      { key: 'spec_draft_n_max', value: { values: [2, 4, 8, 16] }, why: ['draft lengths to try with it.'] },
    ];
  }
  const ub = num(s.ubatch_size) ?? 512;
  return [
    {
      key: 'ubatch_size',
      value: { values: distinct([128, 256, ub]) },
      why: [
        'speculative decoding is off (no --spec-type, no -md draft model); add a draft (-md FILE --spec-type draft-simple)',
        'and run init again. Until then this tunes the physical batch size, which is safe to change.',
      ],
    },
  ];
}
