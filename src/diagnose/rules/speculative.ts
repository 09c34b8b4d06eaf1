// Speculative-decoding family: draft model / MTP / EAGLE set-up errors (speculative_error).
import type { DiagnosisRule } from '../types.js';

const REVISIT_SPEC = {
  text: 'revisit the speculative settings: steps, topk and draft tokens must be consistent for this engine',
  setting: 'speculative_num_steps',
  direction: 'set' as const,
};

/** Rules for speculative-decoding set-up failures. */
export const SPECULATIVE_RULES: DiagnosisRule[] = [
  {
    id: 'speculative.config_rejected',
    class: 'speculative_error',
    confidence: 'high',
    title: 'The engine rejected the speculative-decoding settings',
    patterns: [
      // The keyword must come before the next exception name: each start then scans only to it (linear time; a
      // plain `.*keyword` backtracked over the rest of the line from every "RuntimeError: " of a long one).
      /(?:ValueError|AssertionError|NotImplementedError|RuntimeError): (?<detail>(?:(?!(?:ValueError|AssertionError|NotImplementedError|RuntimeError): ).)*?(?:speculative|num_speculative_tokens|draft model|draft_model|[Ee][Aa][Gg][Ll][Ee]|\bMTP\b).*)/,
      /\b(?<detail>\w+ backend only supports topk = 1 for speculative decoding\.)/,
    ],
    remediation: [REVISIT_SPEC],
  },
  {
    id: 'sglang.speculative_worker_failed',
    class: 'speculative_error',
    engines: ['sglang'],
    confidence: 'medium',
    fatal: false,
    refines: ['unknown', 'bad_config', 'cuda_error'],
    title: 'The error was raised in SGLang speculative-decoding code',
    patterns: [
      /File "[^"]*(?:speculative\/\w+|server_args)\.py", line \d+, in (?<where>\w*(?:speculative|[Ee]agle|EAGLE|draft)\w*)$/,
    ],
    remediation: [REVISIT_SPEC],
  },
  {
    id: 'llamacpp.draft_setup_failed',
    class: 'speculative_error',
    engines: ['llamacpp'],
    confidence: 'high',
    title: 'llama-server could not set up the draft model',
    patterns: [
      /failed to create MTP context/,
      /failed to load draft model(?:, '(?<draft_model>[^']*)')?/,
      /the draft model '(?<draft_model>[^']*)' is not compatible with the target model/,
    ],
    remediation: [
      {
        text: 'check --model-draft (same tokenizer/vocab as the target) or drop the draft settings',
        setting: 'model_draft',
        direction: 'remove',
      },
    ],
  },
  {
    id: 'speculative.draft_model_class',
    class: 'speculative_error',
    confidence: 'medium',
    detail: 'draft_model',
    title: 'The draft model class (EAGLE / MTP / Medusa) lacks a part the engine expects',
    patterns: [
      /AttributeError: '(?<model_class>\w*(?:Eagle|EAGLE|Medusa|MTP|Mtp|Draft)\w*)' object has no attribute '(?<attribute>\w+)'/,
    ],
    remediation: [REVISIT_SPEC, { text: 'use a draft checkpoint made for this target and engine version' }],
  },

  {
    id: 'llamacpp.speculative_assert',
    class: 'speculative_error',
    engines: ['llamacpp'],
    confidence: 'high',
    detail: 'speculative_assert',
    title: 'llama.cpp aborted on an assertion in its speculative-decoding path',
    patterns: [
      /GGML_ASSERT\((?<assert>[^\n]*\bdraft\b[^\n]*)\) failed/,
      /(?:common\/speculative|ngram[\w-]*)\.cpp:\d+: GGML_ASSERT/,
    ],
    remediation: [
      {
        text: "a bug in this build's speculative path with these settings: change the draft settings (--spec-type, --spec-draft-n-max) or update llama.cpp",
        setting: 'spec_draft_n_max',
        direction: 'set',
      },
    ],
  },
];
