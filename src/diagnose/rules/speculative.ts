// Speculative-decoding family: draft model / MTP / EAGLE set-up errors (speculative_error).
import type { DiagnosisRule } from '../types.js';

const REVISIT_SPEC = { text: 'revisit the speculative settings: steps, topk and draft tokens must be consistent for this engine', setting: 'speculative_num_steps', direction: 'set' as const };

/** Rules for speculative-decoding set-up failures. */
export const SPECULATIVE_RULES: DiagnosisRule[] = [
  {
    id: 'speculative.config_rejected', class: 'speculative_error', confidence: 'high',
    title: 'The engine rejected the speculative-decoding settings',
    patterns: [
      /(?:ValueError|AssertionError|NotImplementedError|RuntimeError): (?<detail>.*(?:speculative|num_speculative_tokens|draft model|draft_model|[Ee][Aa][Gg][Ll][Ee]|\bMTP\b).*)/,
      /\b(?<detail>\w+ backend only supports topk = 1 for speculative decoding\.)/,
    ],
    remediation: [REVISIT_SPEC],
  },
  {
    id: 'sglang.speculative_worker_failed', class: 'speculative_error', engines: ['sglang'], confidence: 'medium', fatal: false,
    refines: ['unknown', 'bad_config', 'cuda_error'],
    title: 'The error was raised in SGLang speculative-decoding code',
    patterns: [/File "[^"]*(?:speculative\/\w+|server_args)\.py", line \d+, in (?<where>\w*(?:speculative|[Ee]agle|EAGLE|draft)\w*)$/],
    remediation: [REVISIT_SPEC],
  },
  {
    id: 'llamacpp.draft_setup_failed', class: 'speculative_error', engines: ['llamacpp'], confidence: 'high',
    title: 'llama-server could not set up the draft model',
    patterns: [
      /failed to create MTP context/,
      /failed to load draft model(?:, '(?<draft_model>[^']*)')?/,
      /the draft model '(?<draft_model>[^']*)' is not compatible with the target model/,
    ],
    remediation: [{ text: 'check --model-draft (same tokenizer/vocab as the target) or drop the draft settings', setting: 'model_draft', direction: 'remove' }],
  },
];
