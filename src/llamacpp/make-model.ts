// Small llama-architecture GGUF models with a controlled draft/target relation, for real speculative decoding
// on CPU: the target's layers past `liveLayers` have their output projections scaled by `deadScale`
// (0 = the target computes exactly the draft's logits: 100% acceptance, while still paying for every layer).
import { closeSync, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';
import { GGML_TYPE, GgufMetadata, encodeHeader, layoutTensors, readVocabEntries, type TensorInfo } from './gguf.js';
import { fillTensor, type TensorFill } from './weights.js';

/** Shape and behaviour of one generated model. */
export interface ModelSpec {
  name: string;
  layers: number;
  /** Layers that contribute fully; the rest are scaled by deadScale. */
  liveLayers: number;
  /** 0 = dead layers add nothing (draft == target); 0.01 ~85%, 0.03 ~56%, 0.1 ~15-19% acceptance. */
  deadScale: number;
  embd: number;
  heads: number;
  ff: number;
  ctx: number;
  seed: number;
}

/** What was written. */
export interface ModelStats {
  path: string;
  bytes: number;
  params: number;
  nVocab: number;
  spec: ModelSpec;
}

/** Defaults: 1024 wide so a layer costs far more than the shared 32k-vocab output head (drafts stay cheap). */
export const DEFAULT_SPEC: ModelSpec = {
  name: 'spectune-random-llama',
  layers: 8,
  liveLayers: 8,
  deadScale: 0,
  embd: 1024,
  heads: 16,
  ff: 4096,
  ctx: 4096,
  seed: 1,
};
// Control tokens and the 256 byte-fallback tokens of llama-spm: never sampled (invalid UTF-8 breaks the chat stream).
const BANNED_TOKENS: [number, number] = [0, 258];
// A ChatML template llama.cpp recognises, so /v1/chat/completions works.
const CHAT_TEMPLATE =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

// The tensor list of a llama model (norms in f32, matrices in f16).
export function planTensors(spec: ModelSpec, nVocab: number): TensorFill[] {
  const m = (name: string, rows: number, cols: number, scale = 1): TensorFill => ({
    name,
    rows,
    cols,
    type: GGML_TYPE.F16,
    kind: 'random',
    scale,
  });
  const ones = (name: string): TensorFill => ({
    name,
    rows: 1,
    cols: spec.embd,
    type: GGML_TYPE.F32,
    kind: 'ones',
    scale: 1,
  });
  const out = [
    m('token_embd.weight', nVocab, spec.embd),
    ones('output_norm.weight'),
    m('output.weight', nVocab, spec.embd),
  ];
  for (let i = 0; i < spec.layers; i++) {
    const s = i < spec.liveLayers ? 1 : spec.deadScale;
    out.push(
      ones(`blk.${i}.attn_norm.weight`),
      m(`blk.${i}.attn_q.weight`, spec.embd, spec.embd),
      m(`blk.${i}.attn_k.weight`, spec.embd, spec.embd),
      m(`blk.${i}.attn_v.weight`, spec.embd, spec.embd),
      m(`blk.${i}.attn_output.weight`, spec.embd, spec.embd, s),
      ones(`blk.${i}.ffn_norm.weight`),
      m(`blk.${i}.ffn_gate.weight`, spec.ff, spec.embd),
      m(`blk.${i}.ffn_up.weight`, spec.ff, spec.embd),
      m(`blk.${i}.ffn_down.weight`, spec.embd, spec.ff, s),
    );
  }
  return out;
}

// The llama.* hyper-parameters plus the copied tokenizer.
export function buildMetadata(spec: ModelSpec, vocabEntries: Buffer[], nVocab: number): GgufMetadata {
  const a = 'llama';
  const meta = new GgufMetadata()
    .string('general.architecture', a)
    .string('general.name', spec.name)
    .u32('general.file_type', 1)
    .u32('general.alignment', 32)
    .u32(`${a}.context_length`, spec.ctx)
    .u32(`${a}.embedding_length`, spec.embd)
    .u32(`${a}.block_count`, spec.layers)
    .u32(`${a}.feed_forward_length`, spec.ff)
    .u32(`${a}.attention.head_count`, spec.heads)
    .u32(`${a}.attention.head_count_kv`, spec.heads)
    .f32(`${a}.attention.layer_norm_rms_epsilon`, 1e-5)
    .u32(`${a}.rope.dimension_count`, spec.embd / spec.heads)
    .f32(`${a}.rope.freq_base`, 10000)
    .u32(`${a}.vocab_size`, nVocab);
  for (const e of vocabEntries) meta.raw(e);
  return meta.string('tokenizer.chat_template', CHAT_TEMPLATE);
}

// Write one model to `path`, streaming tensor by tensor (a few hundred MB never sit in memory at once).
export function writeModel(path: string, spec: ModelSpec, vocabPath: string): ModelStats {
  if (spec.embd % spec.heads !== 0) throw new Error(`embd ${spec.embd} is not a multiple of heads ${spec.heads}`);
  const vocab = readVocabEntries(readFileSync(vocabPath));
  const fills = planTensors(spec, vocab.nVocab);
  const infos: TensorInfo[] = fills.map((f) => ({
    name: f.name,
    rows: f.rows,
    cols: f.cols,
    type: f.type,
    offset: 0,
    nbytes: f.rows * f.cols * (f.type === GGML_TYPE.F16 ? 2 : 4),
  }));
  const dataBytes = layoutTensors(infos);
  const header = encodeHeader(buildMetadata(spec, vocab.entries, vocab.nVocab), infos);
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, header);
    fills.forEach((f, i) => {
      writeSync(fd, fillTensor(f, spec.seed, { banned: BANNED_TOKENS }), 0, undefined, header.length + infos[i].offset);
    });
    ftruncateSync(fd, header.length + dataBytes);
  } finally {
    closeSync(fd);
  }
  return {
    path,
    bytes: header.length + dataBytes,
    params: fills.reduce((s, f) => s + f.rows * f.cols, 0),
    nVocab: vocab.nVocab,
    spec,
  };
}

/** A target/draft pair: the draft is the target's first `liveLayers` layers. */
export interface ModelPairSpec {
  target: ModelSpec;
  draft: ModelSpec;
}

// Describe a target with `layers` layers and a `draftLayers`-layer draft that shares its first layers.
export function planPair(
  base: Partial<ModelSpec> & { layers: number; draftLayers: number; deadScale: number },
): ModelPairSpec {
  const spec = { ...DEFAULT_SPEC, ...base };
  return {
    target: { ...spec, name: `${spec.name}-${spec.layers}L-dead${spec.deadScale}`, liveLayers: base.draftLayers },
    draft: {
      ...spec,
      name: `${spec.name}-${base.draftLayers}L`,
      layers: base.draftLayers,
      liveLayers: base.draftLayers,
    },
  };
}
