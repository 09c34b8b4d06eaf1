// The search space init proposes for a unit (pure): per engine, the speculative knob in force and a range
// around it, or — when speculation is off — a knob that is safe to tune, with the reason in words.
import { getEngine } from '../engines/registry.js';
import type { EngineName, ParamValue } from '../engines/types.js';
import type { Commented, YamlValue } from './yaml.js';
import type { EngineUnit } from './types.js';

/** A proposed dimension: the config value and the comment that explains it. */
export interface ProposedDimension { key: string; value: YamlValue; why: string[] }

// A number setting, or null.
function num(v: ParamValue | undefined): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

// Sorted distinct numbers.
function distinct(xs: number[]): number[] {
  return [...new Set(xs)].sort((a, b) => a - b);
}

// SGLang: speculative_num_steps (EAGLE/EAGLE3/NEXTN/STANDALONE), draft tokens for NGRAM, else the CUDA-graph limit.
function sglangSpace(u: EngineUnit): ProposedDimension[] {
  const s = u.settings;
  if (!u.speculativeEnabled) {
    const bs = num(s.cuda_graph_max_bs);
    return [{
      key: 'cuda_graph_max_bs', value: { values: distinct([...(bs ? [bs] : []), 64, 128, 256]) },
      why: ['speculative decoding is off in this unit (no --speculative-algorithm); spectune does not add a draft for you:',
        'enable it in the unit (e.g. --speculative-algorithm EAGLE with its draft) and run init again.',
        'Until then this tunes the largest CUDA-graph batch, which is safe to change and moves decode speed.'],
    }];
  }
  const algo = String(s.speculative_algorithm ?? '');
  if (algo === 'NGRAM') {
    const n = num(s.speculative_num_draft_tokens) ?? 4;
    return [{ key: 'speculative_num_draft_tokens', value: { values: distinct([n, 2, 4, 8, 16]) }, why: [`NGRAM speculation in force with ${n} draft tokens: try shorter and longer drafts around it.`] }];
  }
  const steps = num(s.speculative_num_steps) ?? 3;
  const max = Math.min(10, Math.max(6, steps * 2));
  const topk = num(s.speculative_eagle_topk) ?? 1;
  return [{
    key: 'speculative_num_steps', value: { min: 1, max: Math.max(max, steps) },
    why: [`${algo} speculation in force with speculative_num_steps=${steps} (the baseline, measured first).`,
      `1..${Math.max(max, steps)}: the adaptive search climbs from the baseline while the gain beats the noise margin and stops at the`,
      'plateau; more steps reserve more KV cache per request (Qwen3.5-122B-A10B on two nodes failed to start at steps=10: KV cache out of memory) and fewer fit.',
      ...(topk === 1 ? ['speculative_eagle_topk=1: SGLang sets draft tokens = steps + 1, so they follow steps.'] : [`speculative_eagle_topk=${topk}: draft tokens stay as set in the unit.`])],
  }];
}

// vLLM: num_speculative_tokens inside --speculative-config, else the concurrent-sequence cap.
function vllmSpace(u: EngineUnit): ProposedDimension[] {
  const s = u.settings;
  if (!u.speculativeEnabled) {
    const seqs = num(s.max_num_seqs) ?? 256;
    return [{
      key: 'max_num_seqs', value: { values: distinct([Math.max(1, Math.round(seqs / 2)), seqs, seqs * 2]) },
      why: ['speculative decoding is off in this unit (no --speculative-config); spectune does not add a method for you:',
        'enable it (e.g. --speculative-config \'{"method": "mtp", "num_speculative_tokens": 1}\') and run init again.',
        `Until then this tunes the concurrent-sequence cap around its current value ${seqs}.`],
    }];
  }
  const n = num(s.num_speculative_tokens) ?? 1;
  const max = Math.min(10, Math.max(5, n * 2));
  return [{
    key: 'num_speculative_tokens', value: { min: 1, max: Math.max(max, n) },
    why: [`${String(s.speculative_method ?? 'speculative')} speculation in force with num_speculative_tokens=${n} (the baseline), patched inside`,
      `the unit's own --speculative-config form. 1..${Math.max(max, n)}: acceptance falls with every extra token; the search stops at the plateau.`],
  }];
}

// llama-server: the draft length when a draft type is on; turning draft-simple on when only -md is given.
function llamaSpace(u: EngineUnit): ProposedDimension[] {
  const s = u.settings;
  if (u.speculativeEnabled) {
    const n = num(s.spec_draft_n_max);
    return [{
      key: 'spec_draft_n_max', value: { values: distinct([...(n ? [n] : []), 2, 4, 8, 16]) },
      why: [`--spec-type ${String(s.spec_type)} in force${n ? ` with --spec-draft-n-max ${n}` : ''} (the baseline).`,
        'Draft lengths 2..16: with a good draft longer drafts pay (8 was best for a perfect pair here), with a poor one',
        'they cost more than they save; the search measures both ends.'],
    }];
  }
  if (s.model_draft !== undefined) {
    return [
      { key: 'spec_type', value: { values: ['draft-simple'] }, why: ['a draft model (-md) is loaded but --spec-type is not set, so speculation is OFF; every candidate turns draft-simple on', '(the baseline, as running now, is measured first).'] },
      { key: 'spec_draft_n_max', value: { values: [2, 4, 8, 16] }, why: ['draft lengths to try with it.'] },
    ];
  }
  const ub = num(s.ubatch_size) ?? 512;
  return [{
    key: 'ubatch_size', value: { values: distinct([128, 256, ub]) },
    why: ['speculative decoding is off (no --spec-type, no -md draft model); add a draft (-md FILE --spec-type draft-simple)',
      'and run init again. Until then this tunes the physical batch size, which is safe to change.'],
  }];
}

const BY_ENGINE: Record<EngineName, (u: EngineUnit) => ProposedDimension[]> = { sglang: sglangSpace, vllm: vllmSpace, llamacpp: llamaSpace };

// The proposed space for a unit.
export function proposeSpace(u: EngineUnit): ProposedDimension[] {
  return BY_ENGINE[u.engine](u);
}

// The space as config entries with their comments.
export function spaceEntries(dims: ProposedDimension[]): Record<string, Commented> {
  return Object.fromEntries(dims.map((d) => [d.key, { comment: d.why, value: d.value }]));
}

// How many concurrent requests the unit serves at most (slots, running-request or sequence caps), or null.
export function servingSlots(u: EngineUnit): number | null {
  const s = u.settings;
  const cap = num(s[getEngine(u.engine).maxRequestsKey]);
  return cap !== null && cap > 0 ? cap : null;
}
